/// Comparison of secrets whose time does not depend on where two values first differ, so a client
/// cannot learn a token byte by byte from how long a refusal takes. Used for admin tokens, HTTP
/// source tokens and webhook signatures.
public enum ConstantTime {
    /// Whether `a` and `b` hold the same bytes (a length mismatch answers at once: lengths are not secret).
    public static func equal(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
