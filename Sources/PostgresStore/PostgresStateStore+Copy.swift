import PostgresNIO
import Store

extension PostgresStateStore {
    /// Every row of `tables`, read in one consistent view.
    package func tableRows(_ tables: [String]) throws(StoreError) -> [TableRows] {
        try session.run { s in
            try s.transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") {
                try tables.map { table in
                    guard PostgresSchema.copiedTables.contains(table) else { throw StoreError.invalidChange("there is no table \(table)") }
                    let columns = try s.rows("""
                        SELECT column_name::text AS name FROM information_schema.columns
                        WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position
                        """, [.text(table)]).map { try $0.text("name") }
                    let list = columns.map { "\"\($0)\"" }.joined(separator: ", ")
                    let rows = try s.rows("SELECT \(list) FROM \(table)").map { row in
                        try columns.map { column -> TableValue in
                            let cell = row[column]
                            if cell.bytes == nil { return .null }
                            return cell.dataType == .text || cell.dataType == .varchar ? .text(try cell.decode(String.self)) : .int(try cell.decode(Int64.self))
                        }
                    }
                    return TableRows(table: table, columns: columns, rows: rows)
                }
            }
        }
    }

    /// Replaces the rows of every table in `copies` in one transaction, sets the id sequences past
    /// the copied ids, and bumps the household version so running helpers reload the copy.
    package func replaceTables(_ copies: [TableRows]) throws(StoreError) {
        try session.run { s in
            try s.transaction {
                _ = try s.rows("SELECT version FROM household WHERE id = 1 FOR UPDATE")
                for copy in copies.reversed() { try s.execute("DELETE FROM \(copy.table)") }
                for copy in copies {
                    guard PostgresSchema.copiedTables.contains(copy.table) else { throw StoreError.invalidChange("there is no table \(copy.table)") }
                    let columns = copy.columns.map { "\"\($0)\"" }.joined(separator: ", ")
                    let marks = copy.columns.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
                    let overriding = PostgresSchema.identityTables.contains(copy.table) ? " OVERRIDING SYSTEM VALUE" : ""
                    for row in copy.rows {
                        try s.execute("INSERT INTO \(copy.table) (\(columns))\(overriding) VALUES (\(marks))", row.map { value -> SQLValue in
                            switch value {
                            case .int(let i): .int(i)
                            case .text(let t): .text(t)
                            case .null: .text(nil)
                            }
                        })
                    }
                }
                for table in PostgresSchema.identityTables {
                    try s.execute("""
                        SELECT setval(pg_get_serial_sequence('\(table)', 'id'), COALESCE((SELECT max(id) FROM \(table)), 0) + 1, false)
                        """)
                }
                let next = (try s.rows("SELECT version FROM household WHERE id = 1").first?.int("version") ?? 0) + 1
                try s.execute("UPDATE household SET version = $1, node = $2, committed_at = clock_timestamp() WHERE id = 1", [.int(next), .text(node)])
                try s.execute("SELECT pg_notify($1, $2)", [.text(Self.channel), .text("\(next) \(node) 0")])
            }
        }
    }
}

/// `scrolloff-dns store copy`: the household's rows from one store to another, checked row for row.
package enum StoreCopy {
    package enum Endpoint {
        case sqlite(Store)
        case postgresql(PostgresStateStore)

        func rows() throws(StoreError) -> [TableRows] {
            switch self {
            case .sqlite(let s): try s.tableRows(PostgresSchema.copiedTables)
            case .postgresql(let p): try p.tableRows(PostgresSchema.copiedTables)
            }
        }

        func replace(_ copies: [TableRows]) throws(StoreError) {
            switch self {
            case .sqlite(let s): try s.replaceTables(copies)
            case .postgresql(let p): try p.replaceTables(copies)
            }
        }
    }

    package struct Report: Sendable {
        /// Rows copied per table, in copy order.
        package var rows: [(table: String, count: Int)]
    }

    package enum Failure: Error, Sendable, CustomStringConvertible {
        case targetNotEmpty(tables: [(String, Int)])
        case mismatch(table: String)
        case store(StoreError)

        package var description: String {
            switch self {
            case .targetNotEmpty(let tables):
                "the target already holds rows (\(tables.map { "\($0.0): \($0.1)" }.joined(separator: ", "))); nothing was copied — add --force to replace them"
            case .mismatch(let table):
                "the copy of \(table) does not read back row for row; the target may be used by a running helper — stop the helpers and copy again"
            case .store(let e): "\(e)"
            }
        }
    }

    /// Copies every household table from `source` to `target`, which must be empty unless `force`,
    /// then reads the target back and compares it row for row.
    package static func copy(from source: Endpoint, to target: Endpoint, force: Bool) throws(Failure) -> Report {
        do {
            let existing = try target.rows().filter { !$0.rows.isEmpty }.map { ($0.table, $0.rows.count) }
            if !existing.isEmpty, !force { throw Failure.targetNotEmpty(tables: existing) }
            let copies = try source.rows()
            try target.replace(copies)
            let back = Dictionary(uniqueKeysWithValues: try target.rows().map { ($0.table, $0) })
            for copy in copies {
                guard let read = back[copy.table], read.columns == copy.columns, read.sorted == copy.sorted else {
                    throw Failure.mismatch(table: copy.table)
                }
            }
            return Report(rows: copies.map { ($0.table, $0.rows.count) })
        } catch let e as Failure {
            throw e
        } catch let e as StoreError {
            throw .store(e)
        } catch {
            throw .store(.invalidChange("\(error)"))
        }
    }
}
