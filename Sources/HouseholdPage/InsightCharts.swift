import ControlAPI

/// The household page's charts of SPEC §7, drawn on the server as inline SVG from the
/// same `StatsReport` as `scrolloff stats`: no script, nothing fetched. Each chart is an image with
/// a title and a description that say every number, for screen readers and text browsers.
enum InsightCharts {
    /// The last 7 days: urges as bars, the resisted part in green.
    static func trend(_ s: StatsReport) -> String {
        let days = Array(s.trend.suffix(7))
        let top = max(1, days.map(\.urges).max() ?? 0)
        // Bars stand in 80 px below a 14 px band for their numbers, above the weekday labels.
        let width = 7 * 40, height = 120, chart = 80, top0 = 14
        let words = days.map { d in
            let urges = d.urges == 0 ? "no urges" : "\(d.resisted) of \(urgeCount(d.urges)) resisted"
            return "\(d.weekday.prefix(3)) \(d.day): \(urges), \(TimeWords.span(seconds: d.protectedSeconds)) protected"
        }
        var svg = open("trend", "Urges in the last 7 days", words.joined(separator: "; "), width, height)
        for (i, d) in days.enumerated() {
            let x = i * 40 + 8
            let total = d.urges * chart / top, kept = d.resisted * chart / top
            let base = top0 + chart
            svg += ##"<g class="day" data-day="\##(d.day)" data-urges="\##(d.urges)" data-resisted="\##(d.resisted)">"##
            svg += ##"<rect x="\##(x)" y="\##(base - total)" width="24" height="\##(total - kept)" fill="#c9b99a"/>"##
            svg += ##"<rect x="\##(x)" y="\##(base - kept)" width="24" height="\##(kept)" fill="#2e7d5b"/>"##
            svg += ##"<text x="\##(x + 12)" y="\##(base + 16)" text-anchor="middle" font-size="11">\##(escape(String(d.weekday.prefix(2))))</text>"##
            svg += ##"<text x="\##(x + 12)" y="\##(base - total - 3)" text-anchor="middle" font-size="10">\##(d.urges)</text></g>"##
        }
        return svg + "</svg>"
    }

    /// Urges by hour of the day, 24 cells, darker for more.
    static func heatmap(_ s: StatsReport) -> String {
        let top = max(1, s.heatmap.max() ?? 0)
        let cell = 14, width = 24 * cell, height = 40
        let busy = s.heatmap.enumerated().filter { $0.element > 0 }.map { "\($0.offset) h: \($0.element)" }
        let peak = s.peakHours.map { "Most urges \($0.start)–\($0.end) h. " } ?? "No urges. "
        var svg = open("heatmap", "Urges by hour of the day", peak + (busy.isEmpty ? "" : "Urges by hour: " + busy.joined(separator: ", ")), width, height)
        for (h, n) in s.heatmap.enumerated() {
            // At least a faint cell, so the empty hours are visible too.
            let opacity = n == 0 ? 0.06 : 0.2 + 0.8 * Double(n) / Double(top)
            svg += ##"<rect class="hour" data-hour="\##(h)" data-urges="\##(n)" x="\##(h * cell)" y="0" width="\##(cell - 1)" height="22" fill="#7a4e9c" fill-opacity="\##(String(format: opacity))"/>"##
        }
        for h in [0, 6, 12, 18] { svg += ##"<text x="\##(h * cell + 1)" y="36" font-size="10">\##(h)</text>"## }
        return svg + "</svg>"
    }

    /// Entries by urges, most first.
    static func topEntries(_ s: StatsReport) -> String {
        let rows = s.topEntries
        let top = max(1, rows.map(\.urges).max() ?? 0)
        let height = max(24, rows.count * 22 + 4), width = 300
        let words = rows.map { "\($0.entry): \(urgeCount($0.urges)), \($0.resisted) resisted" }
        var svg = open("top", "Top entries by urges", words.isEmpty ? "No urges." : words.joined(separator: "; "), width, height)
        for (i, e) in rows.enumerated() {
            let y = i * 22 + 2
            svg += ##"<g class="entry" data-entry="\##(escape(e.entry))" data-urges="\##(e.urges)">"##
            svg += ##"<text x="0" y="\##(y + 14)" font-size="12">\##(escape(String(e.entry.prefix(18))))</text>"##
            svg += ##"<rect x="130" y="\##(y + 3)" width="\##(max(2, e.urges * 130 / top))" height="14" fill="#7a4e9c"/>"##
            svg += ##"<text x="\##(136 + e.urges * 130 / top)" y="\##(y + 14)" font-size="11">\##(e.urges)</text></g>"##
        }
        return svg + "</svg>"
    }

    private static func open(_ id: String, _ title: String, _ description: String, _ width: Int, _ height: Int) -> String {
        ##"<svg xmlns="http://www.w3.org/2000/svg" class="chart \##(id)" role="img" viewBox="0 0 \##(width) \##(height)" width="\##(width)" height="\##(height)" aria-label="\##(escape(title)). \##(escape(description))">"##
            + "<title>\(escape(title))</title><desc>\(escape(description))</desc>"
    }

    static func urgeCount(_ n: Int) -> String { n == 1 ? "1 urge" : "\(n) urges" }

    static func escape(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }

    /// The mustache view of one profile's charts and sentences.
    static func view(_ week: StatsReport, digest: StatsReport?) -> [String: Any] {
        var v: [String: Any] = [
            "summary": week.summary,
            "trendChart": trend(week),
            "heatmapChart": heatmap(week),
            "topChart": topEntries(week),
            "streakDays": "\(week.streakDays)",
        ]
        if let digest { v["digest"] = ["range": "\(digest.firstDay) to \(digest.lastDay)", "sentences": digest.summary] }
        return v
    }
}

private extension String {
    /// Two decimals, locale-free.
    init(format: Double) {
        let hundredths = Int((format * 100).rounded())
        self = "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
    }
}
