import ScrollOffCore

/// What this build is, for the control API, the list downloader's User-Agent and the trusted clock.
public enum BuildInfo {
    public static let version = "0.1.0"
    /// A wall clock earlier than this is not trusted (SPEC §11): a router without a real-time clock
    /// boots in 1970 and must wait for NTP. Moved forward with each release, never past the release day.
    public static let date = Instant(secondsSince1970: 1_795_219_200) // 2026-11-21T00:00:00Z
}
