import Foundation
import NetworkAdapterSupport
import RESTAdapter
import Testing
import HeraldCore

@Suite("Webhook signatures and Retry-After")
struct WebhookSignerTests {
    /// The Standard Webhooks specification's own example.
    @Test func matchesTheStandardWebhooksExample() throws {
        let signer = try #require(WebhookSigner(secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
        let body = Array(#"{"test": 2432232314}"#.utf8)
        let signature = signer.signature(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: body)
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        #expect(signer.verify(header: "v1,bogus \(signature)", id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: body))
        #expect(!signer.verify(header: signature, id: "msg_other", timestamp: 1_614_265_330, body: body))
        #expect(!signer.verify(header: signature, id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: body + [0x20]))
    }

    @Test func aWhsecSecretMustBeBase64() {
        #expect(WebhookSigner(secret: "whsec_not base64!") == nil)
        #expect(WebhookSigner(secret: "plain text secret") != nil)
    }

    @Test func retryAfterReadsSecondsAndHTTPDates() {
        let now = Date(timeIntervalSince1970: 1_445_412_400)  // Wed, 21 Oct 2015 07:26:40 GMT
        #expect(RetryAfter.seconds("120", now: now) == 120)
        #expect(RetryAfter.seconds(" 0 ", now: now) == 0)
        #expect(RetryAfter.seconds("Wed, 21 Oct 2015 07:28:00 GMT", now: now) == 80)
        #expect(RetryAfter.seconds("Wed, 21 Oct 2015 07:00:00 GMT", now: now) == 0, "a past date means now")
        #expect(RetryAfter.seconds("99999", now: now, cap: 3600) == 3600)
        #expect(RetryAfter.seconds("-5", now: now) == nil)
        #expect(RetryAfter.seconds("soon", now: now) == nil)
        #expect(RetryAfter.seconds(nil, now: now) == nil)
    }

    @Test func pinsParseOnlyAs32ByteSHA256() {
        #expect(SPKIPin("sha256/" + Data(repeating: 1, count: 32).base64EncodedString()) != nil)
        #expect(SPKIPin("sha256/" + Data(repeating: 1, count: 20).base64EncodedString()) == nil)
        #expect(SPKIPin("sha1/" + Data(repeating: 1, count: 32).base64EncodedString()) == nil)
    }
}

@Suite("Webhook sink configuration")
struct WebhookConfigurationTests {
    static func error(_ lines: String) -> String? {
        do {
            _ = try RESTPageReaderTests.loader.load(text: """
                store: {path: /tmp/x.sqlite}
                sinks:
                  - name: hooks
                    type: webhook
                \(lines)
                """, file: "t.yaml")
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func signingIsRequiredAndOptionsAreChecked() {
        #expect(Self.error("    urls: {notification: https://h/n}\n    secret: s") == nil)
        #expect(Self.error("    urls: {notification: https://h/n}")?.contains("sinks[0].secret: webhooks are signed") == true)
        #expect(Self.error("    urls: {notice: https://h/n}\n    secret: s")?.contains("sinks[0].urls.notice: unknown output kind") == true)
        #expect(Self.error("    urls: {badge: ftp://h/n}\n    secret: s")?.contains("sinks[0].urls.badge") == true)
        #expect(Self.error("    urls: {badge: https://h/n}\n    secret: whsec_!!")?.contains("sinks[0].secret") == true)
        #expect(Self.error("    urls: {badge: https://h/n}\n    secret: s\n    concurrency: 0")?.contains("sinks[0].concurrency") == true)
        #expect(Self.error("    urls: {badge: https://h/n}\n    secret: s\n    tls: {pins: [\"sha256/AAAA\"]}") != nil)
    }
}
