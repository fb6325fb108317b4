import GRDB

/// One cell of a copied row: the schema holds only whole numbers and text.
package enum TableValue: Hashable, Sendable {
    case int(Int64)
    case text(String)
    case null
}

/// A table's rows, for `scrolloff-dns store copy` between SQLite and a shared server.
package struct TableRows: Hashable, Sendable {
    package var table: String
    package var columns: [String]
    package var rows: [[TableValue]]

    package init(table: String, columns: [String], rows: [[TableValue]]) {
        self.table = table
        self.columns = columns
        self.rows = rows
    }

    /// The rows in one order whatever order the database returned them in, for comparing copies.
    package var sorted: [[TableValue]] { rows.sorted { $0.lexicographicallyPrecedes($1, by: TableValue.precedes) } }
}

extension TableValue {
    static func precedes(_ a: TableValue, _ b: TableValue) -> Bool {
        switch (a, b) {
        case (.null, .null): false
        case (.null, _): true
        case (_, .null): false
        case (.int(let x), .int(let y)): x < y
        case (.int, .text): true
        case (.text, .int): false
        case (.text(let x), .text(let y)): x < y
        }
    }
}

extension Store {
    /// Every row of `tables`, read in one transaction.
    package func tableRows(_ tables: [String]) throws(StoreError) -> [TableRows] {
        try read { db in
            try tables.map { table in
                let columns = try db.columns(in: table).map(\.name)
                let rows = try Row.fetchAll(db, sql: "SELECT * FROM \(table.quotedDatabaseIdentifier)").map { row in
                    columns.map { column -> TableValue in
                        let value: DatabaseValue = row[column]
                        switch value.storage {
                        case .int64(let i): return .int(i)
                        case .string(let t): return .text(t)
                        default: return .null
                        }
                    }
                }
                return TableRows(table: table, columns: columns, rows: rows)
            }
        }
    }

    /// Replaces the rows of every table in `copies` (children emptied before parents, filled parents
    /// first) in one transaction: all of it or nothing.
    package func replaceTables(_ copies: [TableRows]) throws(StoreError) {
        try write { db in
            for copy in copies.reversed() { try db.execute(sql: "DELETE FROM \(copy.table.quotedDatabaseIdentifier)") }
            for copy in copies {
                let columns = copy.columns.map(\.quotedDatabaseIdentifier).joined(separator: ", ")
                let marks = Array(repeating: "?", count: copy.columns.count).joined(separator: ", ")
                let statement = try db.makeStatement(sql: "INSERT INTO \(copy.table.quotedDatabaseIdentifier) (\(columns)) VALUES (\(marks))")
                for row in copy.rows {
                    try statement.execute(arguments: StatementArguments(row.map { value -> (any DatabaseValueConvertible)? in
                        switch value {
                        case .int(let i): i
                        case .text(let t): t
                        case .null: nil
                        }
                    }))
                }
            }
        }
    }
}
