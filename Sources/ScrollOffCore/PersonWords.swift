/// A person's own words stored with a rule or a request — a reason, a note, a plan, an
/// alternative: short sentences, shown back on the page, in events and in the log. One number for
/// the engine (which refuses longer text from any source) and the wire bounds (which refuse it
/// before a body is decoded).
public enum PersonWords {
    /// At most this many characters; longer text is refused, never cut.
    public static let longest = 280
}
