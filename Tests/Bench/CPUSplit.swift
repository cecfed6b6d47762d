import Foundation
import HeraldTestKit

#if canImport(Glibc)
import Glibc
#endif

/// Where a phase's CPU goes, in CPU seconds per 1,000 messages: the broker, this bench process (live, the
/// publisher; its polls of the store; in a latency phase its subscribers too), the consumer (`mosquitto_sub`
/// or Herald) and, when Herald stores into PostgreSQL, the server.
///
/// Every process shares the machine's cores: live, a consumer's own cost slows the publisher it is
/// compared with; draining a backlog, it slows the broker that sends the backlog (and, with the sink
/// delivering, takes Herald's outputs). From these figures the report derives how fast the cores could
/// carry the load at all: `cores / (broker + publisher + consumer + server)`.
struct CPUSplit {
    var broker: Double
    var publisher: Double
    var consumer: Double
    var database: Double?

    var total: Double { broker + publisher + consumer + (database ?? 0) }

    /// Messages per second the machine's cores could carry at this cost if they did nothing else.
    var ceiling: Double { Double(Self.cores) / total * 1000 }

    static var cores: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// The share of every core this cost kept busy at `rate` messages per second (1 is all of them).
    func busy(atRate rate: Double) -> Double { total / 1000 * rate / Double(Self.cores) }

    /// `broker / publisher / consumer [/ database] = total s`, three decimals each.
    var figures: String {
        let server = database.map { " / \(format($0, 3))" } ?? ""
        return "\(format(broker, 3)) / \(format(publisher, 3)) / \(format(consumer, 3))\(server) = \(format(total, 3)) s"
    }
}

/// CPU seconds of the broker and of this process from a starting point; the consumer's are measured
/// by the phase (Herald's from /proc, a reaped `mosquitto_sub`'s from this process's children).
struct CPUSplitMeter {
    private let brokerPID: pid_t?
    private let brokerBefore: Double
    private let selfBefore: Double
    private let childrenBefore: Double

    init(broker: MosquittoBroker) {
        brokerPID = broker.pid
        brokerBefore = brokerPID.map { ProcessStats(pid: $0).cpuSeconds } ?? 0
        selfBefore = processCPUSeconds()
        childrenBefore = Self.reapedChildrenCPUSeconds()
    }

    /// The split over `messages`, with `consumerSeconds` as the consumer's CPU and `databaseSeconds` as
    /// the PostgreSQL server's, when there is one.
    func finish(messages: Int, consumerSeconds: Double, databaseSeconds: Double? = nil) -> CPUSplit {
        let broker = (brokerPID.map { ProcessStats(pid: $0).cpuSeconds } ?? 0) - brokerBefore
        let publisher = processCPUSeconds() - selfBefore
        let perThousand = 1000 / Double(max(messages, 1))
        return CPUSplit(broker: broker * perThousand, publisher: publisher * perThousand, consumer: consumerSeconds * perThousand,
                       database: databaseSeconds.map { $0 * perThousand })
    }

    /// CPU seconds of the children reaped since `init`: a `mosquitto_sub` that exited in between.
    func reapedChildrenSeconds() -> Double { Self.reapedChildrenCPUSeconds() - childrenBefore }

    private static func reapedChildrenCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
