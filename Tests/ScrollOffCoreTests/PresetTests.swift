import Testing
@testable import ScrollOffCore

/// SPEC §6: the preset table, and every knob overridable on its own with range checks.
struct PresetTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var preset: Preset
        var cooldown: Span, cap: Span, rollover: Int, freePeeks: Int, tokens: Int, perEntry: Bool
        var testDescription: String { preset.rawValue }
    }

    static let table: [Row] = [
        Row(preset: .strict, cooldown: .hours(2), cap: .minutes(45), rollover: 0, freePeeks: 1, tokens: 0, perEntry: false),
        Row(preset: .balanced, cooldown: .hours(1), cap: .minutes(90), rollover: 3, freePeeks: 2, tokens: 0, perEntry: false),
        Row(preset: .flexible, cooldown: .minutes(30), cap: .minutes(120), rollover: 7, freePeeks: 2, tokens: 3, perEntry: true),
    ]

    @Test(arguments: table)
    func preset_matches_spec_table(_ row: Row) throws {
        let k = try Knobs.resolve(preset: row.preset)
        #expect(k.cooldown == row.cooldown)
        #expect(k.dailyEarnCap == row.cap)
        #expect(k.rolloverDays == row.rollover)
        #expect(k.freePeeksPerDay == row.freePeeks)
        #expect(k.includedTokensPerMonth == row.tokens)
        #expect(k.perEntryWallets == row.perEntry)
        // Knobs outside the §6 table are the §4/§5 numbers in every preset.
        #expect(k.paidPeeksPerDay == 2)
        #expect(k.paidPeekCost == .seconds(60))
        #expect(k.peekLength == .seconds(60))
        #expect(k.tokenLength == .minutes(10))
        #expect(k.earnAmount == .seconds(300))
        #expect(k.earnInterval == .minutes(60))
        #expect(k.starterCredit == .seconds(120))
        #expect(k.perEntryDailySpendCap == nil)
    }

    @Test func strict_is_the_default_preset() {
        #expect(Preset.default == .strict)
        #expect(Preset(rawValue: "balanced") == .balanced)
        #expect(Preset(rawValue: "lenient") == nil)
    }

    @Test func each_override_changes_only_its_own_knob() throws {
        let base = try Knobs.resolve(preset: .strict)
        let cases: [(KnobOverrides, WritableKeyPath<Knobs, Span>?, Span)] = [
            (KnobOverrides(cooldown: .hours(3)), \.cooldown, .hours(3)),
            (KnobOverrides(dailyEarnCap: .minutes(60)), \.dailyEarnCap, .minutes(60)),
            (KnobOverrides(paidPeekCost: .seconds(90)), \.paidPeekCost, .seconds(90)),
            (KnobOverrides(peekLength: .seconds(30)), \.peekLength, .seconds(30)),
            (KnobOverrides(tokenLength: .minutes(5)), \.tokenLength, .minutes(5)),
            (KnobOverrides(earnAmount: .seconds(240)), \.earnAmount, .seconds(240)),
            (KnobOverrides(earnInterval: .minutes(30)), \.earnInterval, .minutes(30)),
            (KnobOverrides(starterCredit: .zero), \.starterCredit, .zero),
        ]
        for (overrides, path, value) in cases {
            let k = try Knobs.resolve(preset: .strict, overrides: overrides)
            var expected = base
            if let path { expected[keyPath: path] = value }
            #expect(k == expected)
        }
        let ints = try Knobs.resolve(preset: .strict, overrides: KnobOverrides(
            rolloverDays: 2, freePeeksPerDay: 0, paidPeeksPerDay: 3, includedTokensPerMonth: 5, perEntryWallets: true))
        var expected = base
        expected.rolloverDays = 2; expected.freePeeksPerDay = 0; expected.paidPeeksPerDay = 3
        expected.includedTokensPerMonth = 5; expected.perEntryWallets = true
        #expect(ints == expected)
    }

    @Test func per_entry_spend_cap_override_sets_and_zero_clears() throws {
        let set = try Knobs.resolve(preset: .flexible, overrides: KnobOverrides(perEntryDailySpendCap: .minutes(20)))
        #expect(set.perEntryDailySpendCap == .minutes(20))
        var withCap = Preset.flexible.knobs
        withCap.perEntryDailySpendCap = .minutes(20)
        #expect(withCap != Preset.flexible.knobs)
        let cleared = try Knobs.resolve(preset: .flexible, overrides: KnobOverrides(perEntryDailySpendCap: .zero))
        #expect(cleared.perEntryDailySpendCap == nil)
    }

    struct Bad: Sendable, CustomTestStringConvertible {
        var overrides: KnobOverrides
        var knob: Knob
        var value: String
        var testDescription: String { "\(knob)=\(value)" }
    }

    static let badValues: [Bad] = [
        Bad(overrides: KnobOverrides(cooldown: .minutes(4)), knob: .cooldown, value: "4 min"),
        Bad(overrides: KnobOverrides(cooldown: .hours(24 * 8)), knob: .cooldown, value: "8 d"),
        Bad(overrides: KnobOverrides(cooldown: .hours(24 * 8) + .seconds(10)), knob: .cooldown, value: "691210 s"),
        Bad(overrides: KnobOverrides(dailyEarnCap: .hours(30)), knob: .dailyEarnCap, value: "30 h"),
        Bad(overrides: KnobOverrides(dailyEarnCap: Span(milliseconds: 1500)), knob: .dailyEarnCap, value: "1.5 s"),
        Bad(overrides: KnobOverrides(rolloverDays: -1), knob: .rolloverDays, value: "-1"),
        Bad(overrides: KnobOverrides(rolloverDays: 31), knob: .rolloverDays, value: "31"),
        Bad(overrides: KnobOverrides(freePeeksPerDay: 11), knob: .freePeeksPerDay, value: "11"),
        Bad(overrides: KnobOverrides(paidPeeksPerDay: -2), knob: .paidPeeksPerDay, value: "-2"),
        Bad(overrides: KnobOverrides(paidPeekCost: .zero), knob: .paidPeekCost, value: "0 s"),
        Bad(overrides: KnobOverrides(peekLength: .seconds(5)), knob: .peekLength, value: "5 s"),
        Bad(overrides: KnobOverrides(includedTokensPerMonth: 6), knob: .includedTokensPerMonth, value: "6"),
        Bad(overrides: KnobOverrides(tokenLength: .minutes(61)), knob: .tokenLength, value: "1 h 1 min"),
        Bad(overrides: KnobOverrides(earnAmount: .zero), knob: .earnAmount, value: "0 s"),
        Bad(overrides: KnobOverrides(earnInterval: .seconds(59)), knob: .earnInterval, value: "59 s"),
        Bad(overrides: KnobOverrides(starterCredit: .minutes(61)), knob: .starterCredit, value: "1 h 1 min"),
        Bad(overrides: KnobOverrides(perEntryDailySpendCap: .seconds(30)), knob: .perEntryDailySpendCap, value: "30 s"),
    ]

    @Test(arguments: badValues)
    func out_of_range_knob_is_rejected_naming_knob_and_range(_ bad: Bad) {
        #expect(throws: KnobError(knob: bad.knob, value: bad.value)) {
            try Knobs.resolve(preset: .balanced, overrides: bad.overrides)
        }
        let message = KnobError(knob: bad.knob, value: bad.value).description
        #expect(message.contains(bad.knob.rawValue))
        #expect(message.contains(bad.knob.allowedRange))
    }

    @Test func sixth_included_token_is_beyond_the_monthly_ceiling() {
        #expect(Knobs.tokenMonthlyCeiling == 5)
        #expect(throws: KnobError.self) {
            try Knobs.resolve(preset: .flexible, overrides: KnobOverrides(includedTokensPerMonth: 6))
        }
    }

}
