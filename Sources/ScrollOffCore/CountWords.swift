/// Counts as people read them, in every message of the helper and the CLI alike: 12408 →
/// "12,408". No locale: the words must be the same for every user, in logs and in tests.
public enum CountWords {
    public static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return value < 0 ? "-" + out : out
    }
}
