import ScrollOffCore

/// `[[allowances]]`: an owner's daily allowances (SPEC §4a) written in the file, one table per
/// profile, entries and days, in the words of `scrolloff allowance set`. The engine applies them at
/// start and at every reload, a loosening waiting for the profile's locks (`applyConfiguredProfiles`).
public enum AllowanceKeys {
    static let allowances = ReloadPart.appliedByOwner(named: .section(.allowances))

    public static let profile = Setting(
        .allowances, "profile", .text, default: .value("\"default\""),
        allowed: "\"default\" or the name of a [[profiles]] table",
        doc: "The profile the allowance is for.",
        reload: allowances)
    public static let entries = Setting(
        .allowances, "entries", .texts, default: .value("[]"),
        allowed: "[] (any entry) or services, categories, list names or domains, such as [\"youtube\", \"news.example.com\"]",
        doc: "The entries the time may be spent on; [] = any entry of the profile.",
        reload: allowances)
    public static let amount = Setting(
        .allowances, "amount", .duration(.seconds(1) ... Allowance.longest), default: .none("required"),
        allowed: "1s to 24h, such as \"1h\" or \"90min\"",
        doc: "Time a day the profile may spend on those entries without earning it.",
        reload: allowances)
    public static let days = Setting(
        .allowances, "days", .text, default: .value("\"daily\""),
        allowed: "\"daily\", \"weekdays\", \"weekends\" or days such as \"mon,wed,fri\"",
        doc: "The weekdays the amount is given on; the other days give nothing unless another table for the same entries names them.",
        reload: allowances)

    public static let all = [profile, entries, amount, days]
}
