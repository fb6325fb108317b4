import HouseholdPage

/// `[web]`: the household page (SPEC §9a).
public enum WebKeys {
    public static let listen = Setting(
        .web, "listen", .texts,
        // Derived, not read: a listen the file names makes a port in use stop the start, and the
        // default's only turns the page off (`webListenRequired`).
        default: .derived(shown: "\"127.0.0.1:\(HelperConfiguration.defaultWebPort)\"", meaning: "a port in use at the default only turns the page off"),
        allowed: "\"\" or [] (off), ADDR:PORT such as \"0.0.0.0:\(HelperConfiguration.defaultWebPort)\" for the LAN, or a list such as [\"192.168.1.2:\(HelperConfiguration.defaultWebPort)\", \"127.0.0.1:\(HelperConfiguration.defaultWebPort)\"]",
        doc: "Where the household page listens: one address or a list (one string still works); \"\" = off. Plain HTTP: keep it on loopback or a LAN you trust.",
        reload: .restart(\.webListenAddresses))
    public static let requestTimeout = Setting(
        .web, "request_timeout", .duration(WebSettings.requestTimeoutRange), default: .value("\"5s\""),
        allowed: "1s to 60s",
        doc: "A connection must send a whole request (head and body) within this, or it is closed.",
        reload: .restart(\.web.requestTimeout))
    public static let signInMaxDelay = Setting(
        .web, "sign_in_max_delay", .duration(WebSettings.signInMaximumDelayRange), default: .value("\"5min\""),
        allowed: "1s to 1h",
        doc: "Longest wait between sign-in tries for one owner's name after 3 wrong passwords in a row.",
        reload: .restart(\.web.signInMaximumDelay))

    public static let all = [listen, requestTimeout, signInMaxDelay]
}
