import CPython  // memcmp (from the C library the shim includes); no Python call here

/// A JSON document read without Python: its structure checked and every value found, so that
/// building its Python objects later (`JSONToPython.decode(_:tape:budget:)`, under the GIL)
/// reads no byte of the document but the strings it copies.
///
/// `scan` needs no GIL and touches no Python object: a page iterator runs it on the task that
/// fetched a page ahead, while the Python thread works on the page before. It is the one-pass
/// parser's grammar (`JSONToPython.decode`) to the byte, and it gives up (nil) wherever that
/// parser could stop early: malformed JSON, a document past `maxDepth`, bytes `decode` does not
/// take. Those go to the one-pass parser, which decides as it always did. What a tape says:
///
/// - a string's place and length in the document, whether it is plain ASCII (copied into a new
///   `str` as it is), and, when it has escapes, its unescaped UTF-8 (`unescaped`);
/// - each object key as an index into `keys`, one per distinct spelling: the build makes a key's
///   `str` (or finds it known from earlier documents) once per document, not at every object;
/// - numbers already read: integers of up to 18 characters as `Int64`, floats whose decimal
///   value converts exactly in one IEEE operation (at most 2^53 as digits, a power of ten up to
///   10^22: Clinger's fast path, the correctly rounded answer that `PyOS_string_to_double`
///   gives); any other number is left as its text for the build;
/// - each non-empty object's shape (`shapeKeys`): the build copies the dicts of a shape after
///   the first (`DictLayout`);
/// - a string that is the last string under its key again (`Kind.repeated`): the build gives
///   it the `str` made for that one.
///
/// Bounded: past `maxWords` words of tape (64 MiB for the default), `scan` gives up and the
/// one-pass parser, with its budget, decides.
public struct JSONTape: Sendable {
    /// The kind of a tape word, in its top four bits; the other 60 hold a length or an index.
    enum Kind: UInt64 {
        case arrayStart = 0
        /// Payload: the object's shape + 1 (`shapeKeys`), 0 when it has none.
        case objectStart
        case end
        /// Payload: length; next word: offset in the document. Only bytes below 0x80.
        case asciiString
        /// Payload: length; next word: offset in the document. UTF-8 with no escape.
        case utf8String
        /// Payload: length; next word: offset in `unescaped`.
        case escapedString
        /// Payload: index in `keys`.
        case key
        /// Next word: the value's bits.
        case int
        /// Payload: length; next word: offset of its text in the document.
        case bigInt
        /// Next word: the value's bits.
        case double
        /// Payload: length; next word: offset of its text in the document.
        case floatText
        /// Payload: 0 false, 1 true, 2 null, 3 NaN, 4 Infinity, 5 -Infinity.
        case literal
        /// Payload: length; next word: offset in the document (low 32 bits) and the string's
        /// index in the document's repeated strings (high 32). Plain ASCII, met again later.
        case firstOfRepeated
        /// Payload: length; next word: the string's index in the document's repeated strings.
        case repeated
    }

    /// The tape's words: the buffer the scan wrote, freed with the last tape holding it.
    ///
    /// Written only before it is handed to a tape, read only after: `@unchecked Sendable`.
    final class Words: @unchecked Sendable {
        private let base: UnsafeMutablePointer<UInt64>?
        let count: Int

        /// No words.
        static var none: Words { Words(nil, count: 0) }

        /// Takes `base`, allocated with `count` words or more initialised, to free it.
        init(_ base: UnsafeMutablePointer<UInt64>?, count: Int) {
            self.base = base
            self.count = count
        }

        deinit { base?.deallocate() }

        func withUnsafeBufferPointer<Result>(_ body: (UnsafeBufferPointer<UInt64>) throws -> Result) rethrows
            -> Result
        {
            try body(UnsafeBufferPointer(start: base, count: count))
        }
    }

    /// One distinct key: where its text is (in the document, or in `unescaped` when `escaped`).
    struct Key: Sendable {
        var offset: Int
        var count: Int
        /// FNV-1a of its bytes (the known-key table's hash); 0 for an escaped key.
        var hash: UInt32
        var escaped: Bool
        var ascii: Bool
    }

    var words = Words.none
    var keys: [Key] = []
    var unescaped: [UInt8] = []
    /// Each shape's key indices, back to back: shape `s` is `shapeKeys[shapeStarts[s]..<shapeStarts[s + 1]]`.
    ///
    /// A shape is a sequence of plain keys (indices into `keys`) that a non-empty object of the
    /// document has, in its order; objects with the same keys in the same order have the same
    /// shape (an API's list of records: one shape for all), and the build makes the second and
    /// later ones by copying the first one's table (`DictTemplates`). An object with an escaped
    /// key, or past `maxShapes` distinct shapes, has none.
    var shapeKeys: [Int32] = []
    var shapeStarts: [Int32] = [0]
    /// The most distinct shapes a tape records.
    public static let maxShapes = 1 << 16
    /// How many distinct strings repeat in the document (`Kind.firstOfRepeated`, `.repeated`).
    ///
    /// Plain ASCII strings of 2 to `longestRepeated` bytes that are the value of the same key as
    /// the last string under that key (a page of records repeats its owner's URLs, dates, types
    /// record after record): the build makes one `str` and gives it to each occurrence, as a
    /// key's. A `str` cannot change, so only `is` tells.
    var repeatedCount = 0
    /// The longest string the scan compares with the last one under its key.
    static let longestRepeated = 256
    /// The length of the document it was read from.
    let byteCount: Int
    /// The deepest nesting of arrays and objects in it.
    let depth: Int

    static let payloadMask: UInt64 = (1 << 60) - 1

    /// The most words a tape may take for a document: 8 Mi (64 MiB).
    public static let defaultMaxWords = JSONToPython.defaultBudget / 32

    /// The tape of `bytes`, or nil when the one-pass parser should read them (see the type).
    public static func scan(
        _ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = JSONToPython.defaultMaxDepth,
        maxWords: Int = defaultMaxWords
    ) -> JSONTape? {
        guard let base = bytes.baseAddress, JSONToPython.takesFastPath(bytes) else { return nil }
        var scanner = Scanner(start: base, count: bytes.count, maxDepth: maxDepth, maxWords: maxWords)
        var handedOver = false
        defer {
            if !handedOver { scanner.words.deallocate() }
            scanner.stack.deallocate()
            scanner.lastKey.deallocate()
            scanner.objectWord.deallocate()
            scanner.keyBase.deallocate()
            scanner.openKeys.deallocate()
            scanner.following.deallocate()
            scanner.spellings.deallocate()
            scanner.lastString.deallocate()
        }
        guard scanner.document() else { return nil }
        var tape = JSONTape(byteCount: bytes.count, depth: scanner.deepest)
        // The scan's buffer itself (a page's ~250 KB of words not copied again).
        tape.words = Words(scanner.words, count: scanner.wordCount)
        handedOver = true
        tape.keys = scanner.keys
        tape.unescaped = scanner.unescaped
        tape.shapeKeys = scanner.shapeKeys
        tape.shapeStarts = scanner.shapeStarts
        tape.repeatedCount = scanner.repeatedCount
        return tape
    }

    /// The tape of `bytes` (see `scan(_:maxDepth:maxWords:)`).
    public static func scan(_ bytes: [UInt8]) -> JSONTape? {
        bytes.withUnsafeBufferPointer { scan($0) }
    }
}

/// One scan: the one-pass parser's loop, writing words instead of objects.
private struct Scanner {
    let start: UnsafePointer<UInt8>
    let end: UnsafePointer<UInt8>
    var cursor: UnsafePointer<UInt8>
    let maxDepth: Int
    let maxWords: Int
    /// The tape so far (`wordCount` of `wordCapacity` words; `scan` frees it).
    var words: UnsafeMutablePointer<UInt64>
    var wordCount = 0
    var wordCapacity: Int
    /// The most words before a step must make room or give up (`makeRoom`, `maxWords`).
    var roomMark: Int
    var keys: [JSONTape.Key] = []
    var unescaped: [UInt8] = []
    /// Open containers, `depth` of them, innermost last: true for an object (`scan` frees it).
    let stack: UnsafeMutablePointer<Bool>
    var depth = 0
    /// For each open container, the index of the last key read in it (-1 before the first).
    let lastKey: UnsafeMutablePointer<Int32>
    /// For each key index + 1 (0: an object's start) and the depth's parity, the key that followed it last time.
    ///
    /// Objects of one kind repeat their keys in one order, so the next key is most often this
    /// one, and checking its bytes is all it takes to know it. The parity tells a record's keys from those of the objects nested in it (a
    /// repository's `url` is followed by `forks_url`, its owner's by `html_url`): without it,
    /// one key in ten of a page of repositories was guessed wrong and looked up by its bytes.
    ///
    /// Entry `(key + 1) * 2 + parity`, -1 for none yet. This and the other tables by key
    /// (`spellings`, `lastString`) have room for `keyCapacity` keys (`scan` frees them).
    var following: UnsafeMutablePointer<Int32>
    /// For each key (by index), where its first occurrence's text and the `":` after it are in
    /// the document (`length` its byte count + 2), when that occurrence was compact (the colon
    /// right after the quote); `length` 0 otherwise (an escaped key, or `"key" :`).
    ///
    /// A guessed key in compact JSON is then checked, closing quote and colon with it, by one
    /// comparison of words.
    var spellings: UnsafeMutablePointer<Spelling>
    /// Where a key's first occurrence is (see `spellings`), and whether a comma came right
    /// before its opening quote there (`,"key":`, a member after another in compact JSON).
    typealias Spelling = (offset: Int, length: Int, afterComma: Bool)
    var keyCapacity = 64
    var deepest = 0
    /// Distinct plain keys by their bytes: a quick hash of them in the top 32 bits, index + 1
    /// into `keys` in the low 32; 0 for an empty slot.
    var keySlots: [UInt64] = Array(repeating: 0, count: 256)
    /// For each open object, the word of its start (its shape is written there when it ends) and
    /// where its keys begin in `openKeys` (`scan` frees both).
    let objectWord: UnsafeMutablePointer<Int>
    let keyBase: UnsafeMutablePointer<Int>
    /// The key indices of the open objects so far, outermost first (-1: an escaped key, no shape).
    var openKeys: UnsafeMutablePointer<Int32>
    var openKeyCount = 0
    var openKeyCapacity = 64
    /// `JSONTape.shapeKeys`, `shapeStarts`, and the shapes by a hash of their keys: the hash in the
    /// top 32 bits, shape + 1 in the low 32; 0 for an empty slot.
    var shapeKeys: [Int32] = []
    var shapeStarts: [Int32] = [0]
    var shapeSlots: [UInt64] = Array(repeating: 0, count: 64)
    /// The shape last found or entered for an object at an even and an odd depth (-1: none).
    var recentShapes: SIMD2<Int> = [-1, -1]
    /// For each key (by index), the word of the last string under it that was not a repeat.
    ///
    /// -1 for none yet. The next string under that key is compared with it: records in a list
    /// repeat many values under the same key (an owner's URLs, a type, a date), and one
    /// comparison is cheaper than hashing every string.
    var lastString: UnsafeMutablePointer<Int32>
    var repeatedCount = 0
    /// Whether offsets fit the 32 bits `Kind.firstOfRepeated` has for them.
    let remembersStrings: Bool

    init(start: UnsafePointer<UInt8>, count: Int, maxDepth: Int, maxWords: Int) {
        self.start = start
        self.end = start + count
        self.cursor = start
        self.maxDepth = maxDepth
        self.maxWords = maxWords
        remembersStrings = count < 1 << 32 && maxWords < 1 << 31
        wordCapacity = count / 16 + 16
        words = .allocate(capacity: wordCapacity)
        roomMark = min(maxWords, wordCapacity - Self.wordsAStep)
        stack = .allocate(capacity: min(maxDepth, count) + 1)
        lastKey = .allocate(capacity: min(maxDepth, count) + 1)
        objectWord = .allocate(capacity: min(maxDepth, count) + 1)
        keyBase = .allocate(capacity: min(maxDepth, count) + 1)
        openKeys = .allocate(capacity: openKeyCapacity)
        following = .allocate(capacity: 2 * (keyCapacity + 1))
        following[0] = -1
        following[1] = -1
        spellings = .allocate(capacity: keyCapacity)
        lastString = .allocate(capacity: keyCapacity)
    }

    /// Notes the key `index` of the innermost open object (-1: one that gives it no shape).
    @inline(__always)
    mutating func noteKey(_ index: Int32) {
        if openKeyCount == openKeyCapacity {
            let larger = UnsafeMutablePointer<Int32>.allocate(capacity: openKeyCapacity * 2)
            larger.moveInitialize(from: openKeys, count: openKeyCount)
            openKeys.deallocate()
            openKeys = larger
            openKeyCapacity *= 2
        }
        openKeys[openKeyCount] = index
        openKeyCount &+= 1
    }

    /// The object at `level` has ended: its shape (found, or entered when new) goes into its
    /// start word, and its keys leave `openKeys`.
    mutating func endObject(at level: Int) {
        let base = keyBase[level]
        let count = openKeyCount - base
        defer { openKeyCount = base }
        guard count > 0 else { return }
        let keys = openKeys + base
        // The shape last found at this depth's parity first (a list's records, their owners):
        // the same keys are that shape, with no hash.
        let parity = level & 1
        let recent = recentShapes[parity]
        if recent >= 0 {
            let first = Int(shapeStarts[recent])
            if Int(shapeStarts[recent + 1]) - first == count,
                shapeKeys.withUnsafeBufferPointer({ known in
                    known.baseAddress.map { memcmp($0 + first, keys, count * 4) == 0 } ?? false
                })
            {
                words[objectWord[level]] |= UInt64(recent + 1)
                return
            }
        }
        var hash: UInt64 = UInt64(count) &* 0x9E37_79B9_7F4A_7C15
        for offset in 0..<count {
            let key = keys[offset]
            guard key >= 0 else { return }
            hash = (hash ^ UInt64(UInt32(bitPattern: key))) &* 0xFF51_AFD7_ED55_8CCD
        }
        let quick = UInt32(truncatingIfNeeded: hash >> 32)
        let mask = shapeSlots.count - 1
        var index = Int(quick) & mask
        for _ in 0..<16 {
            let slot = shapeSlots[index]
            if slot == 0 {
                guard shapeStarts.count - 1 < JSONTape.maxShapes else { return }
                let shape = shapeStarts.count - 1
                shapeKeys.append(contentsOf: UnsafeBufferPointer(start: keys, count: count))
                shapeStarts.append(Int32(shapeKeys.count))
                shapeSlots[index] = UInt64(quick) << 32 | UInt64(shape + 1)
                if shapeStarts.count * 2 > shapeSlots.count { growShapeSlots() }
                words[objectWord[level]] |= UInt64(shape + 1)
                recentShapes[parity] = shape
                return
            }
            if UInt32(truncatingIfNeeded: slot >> 32) == quick {
                let shape = Int(truncatingIfNeeded: slot & 0xFFFF_FFFF) - 1
                let first = Int(shapeStarts[shape])
                if Int(shapeStarts[shape + 1]) - first == count,
                    shapeKeys.withUnsafeBufferPointer({ known in
                        known.baseAddress.map { memcmp($0 + first, keys, count * 4) == 0 } ?? false
                    })
                {
                    words[objectWord[level]] |= UInt64(shape + 1)
                    recentShapes[parity] = shape
                    return
                }
            }
            index = (index + 1) & mask
        }
        // Sixteen slots taken by other shapes: this object has none.
    }

    mutating func growShapeSlots() {
        shapeSlots = Array(repeating: 0, count: shapeSlots.count * 4)
        for shape in 0..<(shapeStarts.count - 1) {
            let first = Int(shapeStarts[shape])
            let count = Int(shapeStarts[shape + 1]) - first
            var hash: UInt64 = UInt64(count) &* 0x9E37_79B9_7F4A_7C15
            for offset in 0..<count {
                hash = (hash ^ UInt64(UInt32(bitPattern: shapeKeys[first + offset]))) &* 0xFF51_AFD7_ED55_8CCD
            }
            Self.place(UInt32(truncatingIfNeeded: hash >> 32), shape + 1, in: &shapeSlots)
        }
    }

    /// Puts entry `id` (1-based) under `quick` in a table being filled again after it grew.
    ///
    /// The first empty slot of `slots` (a power of two long) within 16 probes, as the look-ups
    /// search. A run of 16 full slots leaves the entry out; it is then only never found, as at
    /// its first insertion.
    static func place(_ quick: UInt32, _ id: Int, in slots: inout [UInt64]) {
        let mask = slots.count - 1
        var index = Int(quick) & mask
        for _ in 0..<16 {
            if slots[index] == 0 {
                slots[index] = UInt64(quick) << 32 | UInt64(id)
                return
            }
            index = (index + 1) & mask
        }
    }

    /// Writes a word, within the room `makeRoom` made.
    @inline(__always)
    mutating func append(_ word: UInt64) {
        assert(wordCount < wordCapacity, "a step wrote more than its room")
        words[wordCount] = word
        wordCount &+= 1
    }

    /// Room for `wordsAStep` more words, so that `append` checks nothing: made at each step of
    /// `value`'s loop (a container's start and its end or first key, or a value's two words,
    /// then a comma's key: three at most) and before each container's end, when `wordCount`
    /// is past `roomMark`.
    mutating func makeRoom() {
        if wordCapacity - wordCount < Self.wordsAStep { growWords() }
        roomMark = min(maxWords, wordCapacity - Self.wordsAStep)
    }

    static let wordsAStep = 8

    mutating func growWords() {
        let larger = UnsafeMutablePointer<UInt64>.allocate(capacity: wordCapacity * 2)
        larger.moveInitialize(from: words, count: wordCount)
        words.deallocate()
        words = larger
        wordCapacity *= 2
    }

    @inline(__always)
    mutating func emit(_ kind: JSONTape.Kind, _ payload: Int = 0) {
        append(kind.rawValue << 60 | UInt64(truncatingIfNeeded: payload) & JSONTape.payloadMask)
    }

    @inline(__always)
    mutating func emit(_ kind: JSONTape.Kind, _ payload: Int, word: UInt64) {
        emit(kind, payload)
        append(word)
    }

    mutating func document() -> Bool {
        guard value() else { return false }
        skipWhitespace()
        return cursor == end
    }

    /// One value, containers iteratively, as `Parser.value` reads it.
    mutating func value() -> Bool {
        while true {
            // Past `maxWords` (a rare branch: `roomMark` is below it), or room for this step.
            if wordCount > roomMark {
                guard wordCount <= maxWords else { return false }
                makeRoom()
            }
            guard let byte = peek() else { return false }
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let isObject = byte == UInt8(ascii: "{")
                cursor += 1
                guard depth < maxDepth else { return false }
                if isObject {
                    objectWord[depth] = wordCount
                    keyBase[depth] = openKeyCount
                }
                emit(isObject ? .objectStart : .arrayStart)
                stack[depth] = isObject
                lastKey[depth] = -1
                depth += 1
                deepest = max(deepest, depth)
                guard let next = peek() else { return false }
                if next == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    // An empty container: no shape.
                    cursor += 1
                    emit(.end)
                    depth -= 1
                } else if isObject {
                    guard key() else { return false }
                    continue
                } else {
                    continue
                }
            case UInt8(ascii: "\""):
                guard string() else { return false }
            default:
                guard scalar() else { return false }
            }
            // After a value: a comma (and a key) or the ends of the containers that close here.
            while depth > 0 {
                let isObject = stack[depth &- 1]
                if isObject, commaKey() { break }
                guard let byte = peek() else { return false }
                cursor += 1
                if byte == UInt8(ascii: ",") {
                    if isObject {
                        guard key() else { return false }
                    }
                    break
                }
                guard byte == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else { return false }
                // A run of ends has no bound: each makes its own room (a comma's key has the
                // room the step's start made).
                if wordCount > roomMark { makeRoom() }
                emit(.end)
                depth -= 1
                if isObject { endObject(at: depth) }
            }
            if depth == 0 { return true }
        }
    }

    /// `"key" :`, as an index into `keys` (plain keys met before in this document: the same index).
    ///
    /// Inlined for a guess that holds with its `":` (compact JSON, keys in their last order: the
    /// most common by far); `otherKey` for the rest.
    @inline(__always)
    mutating func key() -> Bool {
        guard peek() == UInt8(ascii: "\"") else { return false }
        let first = cursor + 1
        let level = depth &- 1
        let slot = (Int(lastKey[level]) &+ 1) &* 2 &+ (depth & 1)
        let guess = Int(following[slot])
        if guess >= 0 {
            let spelling = spellings[guess]
            if spelling.length > 0, end - first >= spelling.length,
                same(start + spelling.offset, first, spelling.length)
            {
                cursor = first + spelling.length
                emit(.key, guess)
                noteKey(Int32(truncatingIfNeeded: guess))
                lastKey[level] = Int32(truncatingIfNeeded: guess)
                return true
            }
        }
        return otherKey(first, slot: slot, guess: guess)
    }

    /// Reads `,"key":` at the cursor (right after a member's value) when the key guessed next
    /// was spelt so where it was first met: comma, quote and colon in one comparison of words.
    ///
    /// False otherwise, the cursor unmoved: the loop reads the comma or the end, then `key`.
    @inline(__always)
    mutating func commaKey() -> Bool {
        let level = depth &- 1
        let slot = (Int(lastKey[level]) &+ 1) &* 2 &+ (depth & 1)
        let guess = Int(following[slot])
        guard guess >= 0 else { return false }
        let spelling = spellings[guess]
        let length = spelling.length &+ 2
        guard spelling.afterComma, end - cursor >= length, same(start + spelling.offset - 2, cursor, length) else {
            return false
        }
        cursor += length
        emit(.key, guess)
        noteKey(Int32(truncatingIfNeeded: guess))
        lastKey[level] = Int32(truncatingIfNeeded: guess)
        return true
    }

    /// The rest of `key` after its compact guess failed (`first`: the key's first byte).
    @inline(never)
    mutating func otherKey(_ first: UnsafePointer<UInt8>, slot: Int, guess: Int) -> Bool {
        cursor = first
        if guess >= 0, spells(guess, at: first) {
            cursor = first + keys[guess].count + 1
            emit(.key, guess)
            noteKey(Int32(guess))
            lastKey[depth - 1] = Int32(guess)
        } else {
            guard let run = plainRun() else { return false }
            if run.escape {
                let offset = unescaped.count
                guard unescape(from: first) else { return false }
                emit(.key, keys.count)
                keys.append(
                    .init(offset: offset, count: unescaped.count - offset, hash: 0, escaped: true, ascii: false))
                noteFacts(spelling: (0, 0, false))
                noteKey(-1)
                lastKey[depth - 1] = -1
            } else {
                let count = cursor - first
                cursor += 1
                let index = plainKey(first, count: count, ascii: run.ascii)
                emit(.key, index)
                noteKey(Int32(index))
                following[slot] = Int32(index)
                lastKey[depth - 1] = Int32(index)
            }
        }
        skipWhitespace()
        guard cursor < end, cursor.pointee == UInt8(ascii: ":") else { return false }
        cursor += 1
        return true
    }

    /// Whether the plain key `index` is the one at `first` (its bytes, then the closing quote).
    @inline(__always)
    func spells(_ index: Int, at first: UnsafePointer<UInt8>) -> Bool {
        let key = keys[index]
        guard !key.escaped, end - first > key.count, first[key.count] == UInt8(ascii: "\"") else { return false }
        return same(start + key.offset, first, key.count)
    }

    /// The index of the plain key at `first`, entered in `keys` when new.
    mutating func plainKey(_ first: UnsafePointer<UInt8>, count: Int, ascii: Bool) -> Int {
        let quick = quickHash(first, count: count)
        let mask = keySlots.count - 1
        var index = Int(quick) & mask
        for _ in 0..<16 {
            let slot = keySlots[index]
            if slot == 0 {
                keySlots[index] = UInt64(quick) << 32 | UInt64(keys.count + 1)
                return newKey(first, count: count, ascii: ascii)
            }
            if UInt32(truncatingIfNeeded: slot >> 32) == quick {
                let position = Int(truncatingIfNeeded: slot & 0xFFFF_FFFF) - 1
                let known = keys[position]
                if known.count == count, memcmp(start + known.offset, first, count) == 0 { return position }
            }
            index = (index + 1) & mask
        }
        // Sixteen slots taken by other keys (chosen to collide?): not shared, each occurrence its own.
        return newKey(first, count: count, ascii: ascii)
    }

    /// A hash of a key's length and its first and last eight bytes, for finding it again in this
    /// document (what the known-key table wants, FNV-1a of every byte, is worked out once a key).
    @inline(__always)
    func quickHash(_ first: UnsafePointer<UInt8>, count: Int) -> UInt32 {
        var head: UInt64 = 0
        var tail: UInt64 = 0
        if count >= 8 {
            head = UnsafeRawPointer(first).loadUnaligned(as: UInt64.self)
            tail = UnsafeRawPointer(first + count - 8).loadUnaligned(as: UInt64.self)
        } else {
            for offset in 0..<count { head = head << 8 | UInt64(first[offset]) }
        }
        let mixed =
            (head &* 0x9E37_79B9_7F4A_7C15 ^ tail &* 0xC2B2_AE3D_27D4_EB4F ^ UInt64(count)) &* 0xFF51_AFD7_ED55_8CCD
        return UInt32(truncatingIfNeeded: mixed >> 32)
    }

    mutating func newKey(_ first: UnsafePointer<UInt8>, count: Int, ascii: Bool) -> Int {
        var hash: UInt32 = 2_166_136_261
        for offset in 0..<count { hash = (hash ^ UInt32(first[offset])) &* 16_777_619 }
        keys.append(.init(offset: first - start, count: count, hash: hash, escaped: false, ascii: ascii))
        // `first[count]` is the closing quote.
        let compact = end - first > count + 1 && first[count + 1] == UInt8(ascii: ":")
        // `first[-1]` is the opening quote.
        let afterComma = first - start >= 2 && first[-2] == UInt8(ascii: ",")
        noteFacts(spelling: compact ? (first - start, count + 2, afterComma) : (0, 0, false))
        if keys.count * 2 > keySlots.count { growKeySlots() }
        return keys.count - 1
    }

    /// The tables by key for the key just appended to `keys`: its `spelling`, nothing after it
    /// yet, no string under it yet.
    mutating func noteFacts(spelling: Spelling) {
        let index = keys.count - 1
        if index == keyCapacity {
            let larger = keyCapacity * 2
            let newFollowing = UnsafeMutablePointer<Int32>.allocate(capacity: 2 * (larger + 1))
            newFollowing.moveInitialize(from: following, count: 2 * (keyCapacity + 1))
            following.deallocate()
            following = newFollowing
            let newSpellings = UnsafeMutablePointer<Spelling>.allocate(capacity: larger)
            newSpellings.moveInitialize(from: spellings, count: keyCapacity)
            spellings.deallocate()
            spellings = newSpellings
            let newLastString = UnsafeMutablePointer<Int32>.allocate(capacity: larger)
            newLastString.moveInitialize(from: lastString, count: keyCapacity)
            lastString.deallocate()
            lastString = newLastString
            keyCapacity = larger
        }
        following[2 * (index + 1)] = -1
        following[2 * (index + 1) + 1] = -1
        spellings[index] = spelling
        lastString[index] = -1
    }

    mutating func growKeySlots() {
        keySlots = Array(repeating: 0, count: keySlots.count * 4)
        for (position, key) in keys.enumerated() where !key.escaped {
            Self.place(quickHash(start + key.offset, count: key.count), position + 1, in: &keySlots)
        }
    }

    @inline(__always)
    mutating func scalar() -> Bool {
        switch cursor.pointee {
        case UInt8(ascii: "\""):
            return string()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            if cursor.pointee == UInt8(ascii: "-"), literal("-Infinity") {
                emit(.literal, 5)
                return true
            }
            return number()
        case UInt8(ascii: "t"):
            guard literal("true") else { return false }
            emit(.literal, 1)
        case UInt8(ascii: "f"):
            guard literal("false") else { return false }
            emit(.literal, 0)
        case UInt8(ascii: "n"):
            guard literal("null") else { return false }
            emit(.literal, 2)
        case UInt8(ascii: "N"):
            guard literal("NaN") else { return false }
            emit(.literal, 3)
        case UInt8(ascii: "I"):
            guard literal("Infinity") else { return false }
            emit(.literal, 4)
        default:
            return false
        }
        return true
    }

    mutating func literal(_ text: StaticString) -> Bool { JSONGrammar.literal(text, &cursor, end: end) }

    /// A string value at the cursor (on its opening quote).
    @inline(__always)
    mutating func string() -> Bool {
        cursor += 1
        let first = cursor
        let key = remembersStrings ? memberKey() : -1
        if key >= 0, lastString[key] >= 0, againstLast(first, key: key) { return true }
        guard let run = plainRun() else { return false }
        if run.escape {
            let offset = unescaped.count
            guard unescape(from: first) else { return false }
            emit(.escapedString, unescaped.count - offset, word: UInt64(offset))
            return true
        }
        let length = cursor - first
        // Not told by the last string under its key (`againstLast`): the one the next is read against.
        if key >= 0, run.ascii, length >= 2, length <= JSONTape.longestRepeated { lastString[key] = Int32(wordCount) }
        emit(run.ascii ? .asciiString : .utf8String, length, word: UInt64(first - start))
        cursor += 1
        return true
    }

    /// The key whose value the scan is on (a member's, not an element's), -1 for none or an
    /// escaped one.
    @inline(__always)
    func memberKey() -> Int {
        guard depth > 0, stack[depth &- 1] else { return -1 }
        return Int(lastKey[depth &- 1])
    }

    /// The string at `first` (its first byte) read against the last string met under `key`,
    /// when that tells what it is: false otherwise, the cursor unmoved.
    ///
    /// That string is plain ASCII (no quote, backslash, control character or byte past ASCII).
    /// With a quote right after as many bytes (its length), the new one is either the same
    /// bytes, a repeat: `repeated` is written (that string's word becoming `firstOfRepeated`,
    /// once); or, when none of its words that differ holds a byte that would end or mark a
    /// plain run, plain ASCII of that length: `asciiString` is written and it becomes the last
    /// string under `key`. Either way the string is not scanned byte by byte: records repeat
    /// their values (an owner's URLs, types, dates), or differ in a few bytes of them (a
    /// repository's own URLs), key by key.
    ///
    @inline(__always)
    mutating func againstLast(_ first: UnsafePointer<UInt8>, key: Int) -> Bool {
        func load(_ at: UnsafePointer<UInt8>) -> UInt64 {
            UInt64(littleEndian: UnsafeRawPointer(at).loadUnaligned(as: UInt64.self))
        }
        let word = Int(lastString[key])
        let head = words[word]
        let count = Int(truncatingIfNeeded: head & JSONTape.payloadMask)
        guard end - first > count, first[count] == UInt8(ascii: "\"") else { return false }
        let place = words[word + 1]
        let offset = Int(truncatingIfNeeded: place & 0xFFFF_FFFF)
        let last = start + offset
        if count >= 8 {
            // A word at a time; each word that differs is checked for bytes a plain run stops at
            // (`plainRun`'s tests: exact as to whether there is one). The last word overlaps
            // the one before.
            var differs = false
            var stops: UInt64 = 0
            func stopsIn(_ word: UInt64) -> UInt64 {
                Self.has(word, UInt8(ascii: "\"")) | Self.has(word, UInt8(ascii: "\\")) | Self.belowSpace(word)
                    | word & Self.highBits
            }
            func eight(_ at: Int) {
                let new = load(first + at)
                if load(last + at) != new {
                    differs = true
                    stops |= stopsIn(new)
                }
            }
            var at = 0
            while at < count - 8 {
                eight(at)
                at += 8
            }
            eight(count - 8)
            if differs {
                guard stops == 0 else { return false }
                lastString[key] = Int32(truncatingIfNeeded: wordCount)
                emit(.asciiString, count, word: UInt64(first - start))
                cursor = first + count + 1
                return true
            }
        } else {
            guard same(last, first, count) else { return false }
        }
        let index: Int
        if head >> 60 == JSONTape.Kind.firstOfRepeated.rawValue {
            index = Int(truncatingIfNeeded: place >> 32)
        } else {
            words[word] = JSONTape.Kind.firstOfRepeated.rawValue << 60 | UInt64(count)
            words[word + 1] = UInt64(offset) | UInt64(repeatedCount) << 32
            index = repeatedCount
            repeatedCount += 1
        }
        emit(.repeated, count, word: UInt64(index))
        cursor = first + count + 1
        return true
    }

    /// Whether the `count` bytes at `one` and at `other` (both in the document, `other` after
    /// `one`) are the same.
    ///
    /// Eight bytes at a time, the last eight overlapping the ones before; fewer than eight as
    /// one masked word when eight can be read at `other` (and so at `one`) inside the document.
    @inline(__always)
    func same(_ one: UnsafePointer<UInt8>, _ other: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        func word(_ at: UnsafePointer<UInt8>) -> UInt64 {
            UInt64(littleEndian: UnsafeRawPointer(at).loadUnaligned(as: UInt64.self))
        }
        if count >= 8 {
            // Up to sixteen or twenty-four (most keys with their `":`, or `,"key":`): two or
            // three words, no loop.
            if count <= 16 {
                return (word(one) ^ word(other)) | (word(one + count - 8) ^ word(other + count - 8)) == 0
            }
            if count <= 24 {
                return (word(one) ^ word(other)) | (word(one + 8) ^ word(other + 8))
                    | (word(one + count - 8) ^ word(other + count - 8)) == 0
            }
            var offset = 0
            while count - offset > 8 {
                guard word(one + offset) == word(other + offset) else { return false }
                offset += 8
            }
            return word(one + count - 8) == word(other + count - 8)
        }
        if end - other >= 8 {
            let mask: UInt64 = count == 0 ? 0 : ~0 >> (64 - 8 * count)
            return (word(one) ^ word(other)) & mask == 0
        }
        for offset in 0..<count where one[offset] != other[offset] { return false }
        return true
    }

    /// Moves the cursor from a string's first byte to its closing quote or its first backslash.
    ///
    /// `escape` says which; nil at a control character or the end of the input. Sixteen bytes
    /// at a time (SIMD) while none of them is a quote, a backslash, a control character or past
    /// ASCII, then eight at a time up to the first that is.
    @inline(__always)
    mutating func plainRun() -> (escape: Bool, ascii: Bool)? {
        // In a local: the cursor stays in a register (stores to the tape could alias `self`).
        var at = cursor
        let end = self.end
        defer { cursor = at }
        var ascii = true
        // Locals (constants), not static lets: those are read through a lazy initialiser.
        // Signed bytes: those past ASCII are negative, so one compare finds them and the
        // control characters.
        let quotes = SIMD16<Int8>(repeating: Int8(UInt8(ascii: "\"")))
        let backslashes = SIMD16<Int8>(repeating: Int8(UInt8(ascii: "\\")))
        let spaces = SIMD16<Int8>(repeating: 0x20)
        while true {
            while end - at >= 16 {
                let bytes = UnsafeRawPointer(at).loadUnaligned(as: SIMD16<Int8>.self)
                // Outside 0x20...0x7F: a control character or past ASCII (one signed compare).
                let special = (bytes .== quotes) .| (bytes .== backslashes) .| (bytes .< spaces)
                if any(special) { break }
                at += 16
            }
            while end - at >= 8 {
                let word = UnsafeRawPointer(at).loadUnaligned(as: UInt64.self)
                let special =
                    Self.has(word, UInt8(ascii: "\"")) | Self.has(word, UInt8(ascii: "\\"))
                    | Self.belowSpace(word) | word & Self.highBits
                if special == 0 {
                    at += 8
                    continue
                }
                // The lowest flagged byte is a true one (the tricks' false flags sit above one).
                at += special.trailingZeroBitCount >> 3
                break
            }
            guard at < end else { return nil }
            let byte = at.pointee
            if byte == UInt8(ascii: "\"") { return (false, ascii) }
            if byte == UInt8(ascii: "\\") { return (true, false) }
            if byte < 0x20 { return nil }
            if byte >= 0x80 { ascii = false }
            at += 1
        }
    }

    static let ones: UInt64 = 0x0101_0101_0101_0101
    static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The high bit of each byte of `word` equal to `byte` (and perhaps some above one).
    @inline(__always)
    static func has(_ word: UInt64, _ byte: UInt8) -> UInt64 {
        let folded = word ^ (ones &* UInt64(byte))
        return (folded &- ones) & ~folded & highBits
    }

    /// The high bit of each byte of `word` below 0x20 (and perhaps some above one).
    @inline(__always)
    static func belowSpace(_ word: UInt64) -> UInt64 {
        (word &- ones &* 0x20) & ~word & highBits
    }

    /// The rest of a string with escapes (the cursor on its first backslash, `first` on its
    /// first byte), unescaped into `unescaped` as the one-pass parser does it (`JSONEscapes`).
    mutating func unescape(from first: UnsafePointer<UInt8>) -> Bool {
        unescaped.append(contentsOf: UnsafeBufferPointer(start: first, count: cursor - first))
        return JSONEscapes.decodeRest(&cursor, end: end, into: &unescaped)
    }

    /// A number, as `Parser.number` reads it; its value when that needs no Python.
    mutating func number() -> Bool {
        let first = cursor
        // The most common first: a positive integer of up to 18 digits, read in one pass.
        if first.pointee &- UInt8(ascii: "1") < 9 {
            var at = first
            var magnitude: Int64 = 0
            while at < end, at - first <= 18 {
                let digit = at.pointee &- UInt8(ascii: "0")
                guard digit < 10 else { break }
                magnitude = magnitude &* 10 &+ Int64(digit)
                at += 1
            }
            if at - first <= 18,
                at == end || (at.pointee != UInt8(ascii: ".") && at.pointee | 0x20 != UInt8(ascii: "e"))
            {
                cursor = at
                emit(.int, 0, word: UInt64(bitPattern: magnitude))
                return true
            }
        }
        let negative = cursor.pointee == UInt8(ascii: "-")
        guard let parts = JSONGrammar.number(&cursor, end: end) else { return false }
        let (integerEnd, fractionEnd, exponentStart, isFloat) =
            (parts.integerEnd, parts.fractionEnd, parts.exponentStart, parts.isFloat)
        let length = cursor - first
        let offset = UInt64(first - start)
        if !isFloat {
            guard length <= 18 else {
                emit(.bigInt, length, word: offset)
                return true
            }
            var magnitude: Int64 = 0
            var digit = negative ? first + 1 : first
            while digit < cursor {
                magnitude = magnitude * 10 + Int64(digit.pointee &- UInt8(ascii: "0"))
                digit += 1
            }
            emit(.int, 0, word: UInt64(bitPattern: negative ? -magnitude : magnitude))
            return true
        }
        if let value = exactDouble(
            digits: negative ? first + 1 : first, integerEnd: integerEnd, fractionEnd: fractionEnd,
            exponent: exponentStart, end: cursor)
        {
            emit(.double, 0, word: (negative ? -value : value).bitPattern)
        } else {
            emit(.floatText, length, word: offset)
        }
        return true
    }

    /// 10^0 … 10^22, each exact in a Double.
    static let powersOfTen: [Double] = (0...22).map { power in
        var value = 1.0
        for _ in 0..<power { value *= 10 }
        return value
    }

    /// The magnitude of a float whose digits make at most 2^53 and whose power of ten is within
    /// ±22 (one correctly rounded multiplication or division of exact operands); nil otherwise.
    func exactDouble(
        digits: UnsafePointer<UInt8>, integerEnd: UnsafePointer<UInt8>, fractionEnd: UnsafePointer<UInt8>,
        exponent: UnsafePointer<UInt8>?, end: UnsafePointer<UInt8>
    ) -> Double? {
        var mantissa: UInt64 = 0
        var digit = digits
        while digit < fractionEnd {
            if digit != integerEnd {
                mantissa = mantissa * 10 + UInt64(digit.pointee &- UInt8(ascii: "0"))
                guard mantissa <= 1 << 53 else { return nil }
            }
            digit += 1
        }
        let fractionDigits = fractionEnd > integerEnd ? fractionEnd - integerEnd - 1 : 0
        var power = 0
        if var at = exponent {
            let negative = at.pointee == UInt8(ascii: "-")
            if at.pointee == UInt8(ascii: "-") || at.pointee == UInt8(ascii: "+") { at += 1 }
            while at < end {
                power = power * 10 + Int(at.pointee &- UInt8(ascii: "0"))
                guard power < 1000 else { return nil }
                at += 1
            }
            if negative { power = -power }
        }
        power -= fractionDigits
        if mantissa == 0 { return 0 }
        guard (-22...22).contains(power) else { return nil }
        let value = Double(mantissa)
        return power >= 0 ? value * Self.powersOfTen[power] : value / Self.powersOfTen[-power]
    }

    /// The byte at the cursor after any whitespace (the cursor moved past it); nil at the end.
    @inline(__always)
    mutating func peek() -> UInt8? {
        if cursor < end, cursor.pointee > 0x20 { return cursor.pointee }
        return peekPastSpace()
    }

    @inline(never)
    mutating func peekPastSpace() -> UInt8? {
        skipWhitespace()
        return cursor < end ? cursor.pointee : nil
    }

    @inline(__always)
    mutating func skipWhitespace() {
        // Compact JSON, as APIs send it: most often nothing to skip.
        guard cursor < end, cursor.pointee <= 0x20 else { return }
        var at = cursor
        while at < end {
            switch at.pointee {
            case 0x20, 0x09, 0x0A, 0x0D: at += 1
            default:
                cursor = at
                return
            }
        }
        cursor = at
    }
}
