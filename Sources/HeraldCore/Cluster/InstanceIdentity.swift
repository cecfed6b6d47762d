import Foundation

/// Who this running gateway is among the instances that share a store: the configured
/// `instance.id`, the host name unless set. Leases are held under it, so an instance that restarts
/// under the same id takes its leases back at once instead of waiting for them to expire; two
/// instances must therefore never share an id.
public struct InstanceIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The configured id.
    public var id: String

    /// Creates an identity.
    public init(id: String) {
        self.id = id
    }

    /// What leases record as their holder.
    public var holder: String { id }

    /// The id.
    public var description: String { id }

    /// The host name, the default id.
    public static var defaultID: String { ProcessInfo.processInfo.hostName }
}
