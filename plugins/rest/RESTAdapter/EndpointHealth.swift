import Synchronization

/// Combines the endpoints' states into the source's readiness: up while every endpoint's last poll
/// succeeded.
final class EndpointHealth: Sendable {
    private let states: Mutex<[Bool]>
    private let report: @Sendable (Bool) -> Void

    init(count: Int, report: @escaping @Sendable (Bool) -> Void) {
        states = Mutex(Array(repeating: false, count: count))
        self.report = report
    }

    func set(_ index: Int, up: Bool) {
        let all = states.withLock { states -> Bool in
            states[index] = up
            return states.allSatisfy { $0 }
        }
        report(all)
    }
}
