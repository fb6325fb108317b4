import ControlAPI
import ScrollOffCore
import Testing

@Suite("A refusal's rule crosses the wire as a typed value")
struct RefusalRuleWireTests {
    @Test(arguments: Refusal.Rule.allCases)
    func every_rule_reads_back_from_its_wire_name(rule: Refusal.Rule) {
        #expect(Refusal.Rule(wireName: rule.wireName) == rule)
        #expect(rule.wireName.allSatisfy { $0.isLowercase || $0 == "_" })
    }

    @Test func wire_names_are_the_snake_case_scripts_already_read() {
        #expect(Refusal.Rule.curfewEditLock.wireName == "curfew_edit_lock")
        #expect(Refusal.Rule.bypassLockout.wireName == "bypass_lockout")
        #expect(Refusal.Rule.cooldown.wireName == "cooldown")
    }

    @Test func a_rule_name_this_build_does_not_know_is_no_rule() {
        #expect(Refusal.Rule(wireName: "a_rule_from_a_newer_helper") == nil)
        #expect(ControlError(code: "refused", message: "m", rule: "curfewEditLock").refusalRule == nil)
        #expect(ControlError(code: "refused", message: "m", rule: "curfew_edit_lock").refusalRule == .curfewEditLock)
    }
}
