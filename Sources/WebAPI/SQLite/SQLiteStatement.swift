import CSQLite

/// One compiled statement of a `SQLiteConnection`, run again and again: bind, step, read the
/// columns, reset.
///
/// Not shared between threads (it belongs to its connection's).
///
/// Parameters are numbered from 1 and columns from 0, as in SQLite's C API. Texts and blobs are
/// bound with `SQLITE_TRANSIENT` (SQLite copies them at once); `handle` is there for code that
/// binds the caller's own buffers.
public final class SQLiteStatement {
    /// SQLite's handle (`sqlite3_stmt *`).
    public let handle: OpaquePointer
    /// The connection, kept open while the statement lives.
    public let connection: SQLiteConnection

    init(handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// The statement's text.
    public var sql: String { String(cString: sqlite3_sql(handle)) }

    // MARK: Binding

    /// Binds NULL to parameter `index`.
    public func bindNull(at index: Int32) {
        sqlite3_bind_null(handle, index)
    }

    /// Binds an integer to parameter `index`.
    public func bind(_ value: Int64, at index: Int32) {
        sqlite3_bind_int64(handle, index, value)
    }

    /// Binds a real number to parameter `index`.
    public func bind(_ value: Double, at index: Int32) {
        sqlite3_bind_double(handle, index, value)
    }

    /// Binds text (its UTF-8, copied) to parameter `index`.
    public func bind(_ value: String, at index: Int32) {
        var value = value
        value.withUTF8 { bytes in
            // A base address is needed even for "" (NULL would bind SQL NULL).
            let start = bytes.baseAddress.map { UnsafeRawPointer($0) } ?? UnsafeRawPointer(bitPattern: 1)
            sqlite3_bind_text(
                handle, index, start?.assumingMemoryBound(to: CChar.self), Int32(bytes.count),
                apimacro_sqlite_transient())
        }
    }

    /// Binds a blob (copied) to parameter `index`; an empty one is a blob of length zero, not NULL.
    public func bind(_ value: [UInt8], at index: Int32) {
        _ = value.withUnsafeBytes { bytes in
            if let start = bytes.baseAddress, bytes.count > 0 {
                sqlite3_bind_blob(handle, index, start, Int32(bytes.count), apimacro_sqlite_transient())
            } else {
                sqlite3_bind_zeroblob(handle, index, 0)
            }
        }
    }

    /// Binds `value` to parameter `index`.
    public func bind(_ value: SQLiteValue, at index: Int32) {
        switch value {
        case .null: bindNull(at: index)
        case .integer(let number): bind(number, at: index)
        case .real(let number): bind(number, at: index)
        case .text(let text): bind(text, at: index)
        case .blob(let bytes): bind(bytes, at: index)
        }
    }

    /// Binds `values` to parameters 1, 2, … in order.
    public func bind(_ values: [SQLiteValue]) {
        for (offset, value) in values.enumerated() { bind(value, at: Int32(offset + 1)) }
    }

    // MARK: Running

    /// Runs the statement to its next row: true when there is one to read, false when it is done.
    ///
    /// - Throws: `SQLiteError`; the statement is reset then, and can be bound and run again.
    public func step() throws -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        let error = connection.error(code, sql: sql)
        sqlite3_reset(handle)
        throw error
    }

    /// Makes the statement ready to run again (its bindings stay).
    public func reset() {
        sqlite3_reset(handle)
    }

    /// Sets every parameter back to NULL.
    public func clearBindings() {
        sqlite3_clear_bindings(handle)
    }

    /// Resets the statement, binds `values` and runs it to the end (a statement that writes).
    public func execute(_ values: [SQLiteValue] = []) throws {
        sqlite3_reset(handle)
        bind(values)
        while try step() {}
        sqlite3_reset(handle)
    }

    // MARK: Columns

    /// How many columns a row has.
    public var columnCount: Int32 { sqlite3_column_count(handle) }

    /// The name of column `index`.
    public func columnName(_ index: Int32) -> String {
        sqlite3_column_name(handle, index).map { String(cString: $0) } ?? ""
    }

    /// Whether column `index` of the current row is NULL.
    public func isNull(_ index: Int32) -> Bool {
        sqlite3_column_type(handle, index) == SQLITE_NULL
    }

    /// Column `index` as an integer (SQLite's conversion: NULL is 0).
    public func int64(_ index: Int32) -> Int64 {
        sqlite3_column_int64(handle, index)
    }

    /// Column `index` as a real number (SQLite's conversion: NULL is 0).
    public func double(_ index: Int32) -> Double {
        sqlite3_column_double(handle, index)
    }

    /// Column `index` as text (its UTF-8; NULL is "").
    public func text(_ index: Int32) -> String {
        // The pointer first, then the size (SQLite's documented order).
        guard let start = sqlite3_column_text(handle, index) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    }

    /// Column `index` as bytes (NULL is empty).
    public func blob(_ index: Int32) -> [UInt8] {
        guard let start = sqlite3_column_blob(handle, index) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, index))
        return Array(UnsafeRawBufferPointer(start: start, count: count))
    }

    /// Column `index` as the value SQLite holds.
    public func value(_ index: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: .integer(int64(index))
        case SQLITE_FLOAT: .real(double(index))
        case SQLITE_TEXT: .text(text(index))
        case SQLITE_BLOB: .blob(blob(index))
        default: .null
        }
    }
}
