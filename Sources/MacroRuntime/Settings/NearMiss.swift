/// "Did you mean X": the closest of a few known words to a mistyped one, by
/// edit distance (insertions, deletions, substitutions and swaps of two
/// neighbouring characters each count 1, so `rnu` is one step from `run`).
public enum NearMiss {
    /// The known word closest to `word` when it is close enough to be a typo
    /// (1 step for words of up to 3 characters, 2 otherwise); nil otherwise.
    public static func suggestion(for word: String, among known: [String]) -> String? {
        let lowered = word.lowercased()
        let scored = known.map { (word: $0, distance: distance(lowered, $0.lowercased())) }
        guard let best = scored.min(by: { $0.distance < $1.distance }), best.distance > 0 else { return nil }
        return best.distance <= (best.word.count <= 3 ? 1 : 2) ? best.word : nil
    }

    /// The edit distance with neighbour swaps (optimal string alignment).
    public static func distance(_ first: String, _ second: String) -> Int {
        let a = Array(first)
        let b = Array(second)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var best = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    best = min(best, table[i - 2][j - 2] + 1)
                }
                table[i][j] = best
            }
        }
        return table[a.count][b.count]
    }
}
