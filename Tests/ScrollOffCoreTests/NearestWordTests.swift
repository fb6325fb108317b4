import ScrollOffCore
import Testing

/// The did-you-mean: the nearest known word within a small edit distance, or none.
@Suite("The nearest known word to a typo")
struct NearestWordTests {
    static let verbs = ["status", "stats", "block", "unblock", "schedule", "focus", "wallet", "use", "stop", "peek", "token",
                        "lists", "plan", "doctor", "services"]
    static let services = ["instagram", "tiktok", "youtube", "reddit", "x", "facebook", "snapchat"]

    @Test(arguments: [
        ("blokc", "block"), ("Blokc", "block"), ("BLOCK", "block"), ("sttaus", "status"), ("walet", "wallet"),
        ("focsu", "focus"), ("doctr", "doctor"), ("srevices", "services"), ("tokne", "token"), ("pek", "peek"),
    ] as [(String, String)])
    func a_near_verb_is_suggested(typo: String, verb: String) {
        #expect(NearestWord.suggestion(for: typo, among: Self.verbs) == verb)
    }

    @Test(arguments: [("instagarm", "instagram"), ("instgram", "instagram"), ("tiktk", "tiktok"), ("youtbue", "youtube"),
                      ("reddti", "reddit"), ("facebok", "facebook")] as [(String, String)])
    func a_near_service_is_suggested(typo: String, service: String) {
        #expect(NearestWord.suggestion(for: typo, among: Self.services) == service)
    }

    @Test(arguments: [
        "", " ", "xyzzyplugh", "qqqqqqqqqq", "ls", "z", "ü", "🙂", "блок", "instagramfacebook", "-1", "99999999999h",
        String(repeating: "b", count: 100_000), "s t a t u s",
    ])
    func a_word_far_from_every_verb_gets_no_suggestion(word: String) {
        #expect(NearestWord.suggestion(for: word, among: Self.verbs) == nil)
    }

    @Test func an_exact_word_is_not_suggested_to_itself() {
        #expect(NearestWord.suggestion(for: "block", among: ["block"]) == nil)
    }

    @Test func short_words_get_at_most_one_edit_and_longer_words_two() {
        // "pk" is two edits from "peek": too far for a two-letter word.
        #expect(NearestWord.suggestion(for: "pk", among: ["peek"]) == nil)
        #expect(NearestWord.suggestion(for: "pek", among: ["peek"]) == "peek")
        #expect(NearestWord.suggestion(for: "shedul", among: ["schedule"]) == "schedule")
        #expect(NearestWord.suggestion(for: "shdul", among: ["schedule"]) == nil)
    }

    @Test func a_tie_goes_to_the_first_in_alphabetical_order_so_the_answer_is_stable() {
        #expect(NearestWord.suggestion(for: "bat", among: ["cat", "bar"]) == "bar")
        #expect(NearestWord.suggestion(for: "bat", among: ["bar", "cat"]) == "bar")
    }

    @Test func the_nearest_of_several_close_words_wins() {
        #expect(NearestWord.suggestion(for: "unblok", among: ["block", "unblock"]) == "unblock")
    }

    @Test(arguments: [("block", "blokc", 1), ("ca", "abc", 3), ("", "abc", 3), ("abc", "", 3), ("kitten", "sitting", 3),
                      ("ü", "u", 1), ("same", "same", 0)] as [(String, String, Int)])
    func the_distance_counts_an_adjacent_swap_as_one_edit(a: String, b: String, distance: Int) {
        #expect(NearestWord.distance(a, b) == distance)
    }

    @Test func empty_candidates_and_empty_candidate_words_give_nothing() {
        #expect(NearestWord.suggestion(for: "block", among: []) == nil)
        #expect(NearestWord.suggestion(for: "x", among: [""]) == nil)
    }
}
