import HeraldPluginAPI
import MQTTAdapter
import Testing

@Suite("Topic templates")
struct TopicTemplateTests {
    @Test func placeholdersBecomeSingleLevelWildcardsAndCaptureValues() throws {
        let template = try TopicTemplate("tenant/users/{user}/chats/{chat}/read")
        #expect(template.filter == "tenant/users/+/chats/+/read")
        #expect(template.match("tenant/users/bob/chats/c1/read") == ["user": "bob", "chat": "c1"])
        #expect(template.match("tenant/users/bob/chats/c1/read/extra") == nil)
        #expect(template.match("tenant/users//chats/c1/read") == nil)
        #expect(template.match("other/users/bob/chats/c1/read") == nil)
        #expect(template.render(["user": "alice", "chat": "c9"]) == "tenant/users/alice/chats/c9/read")
    }

    @Test func matchingComparesWholeLevels() throws {
        let template = try TopicTemplate("chats/{chat}/messages")
        #expect(template.match("chats/c1/messages") == ["chat": "c1"])
        #expect(template.match("chats/grüße-🎉/messages") == ["chat": "grüße-🎉"])
        #expect(template.match("chats/c1") == nil)
        #expect(template.match("chats/c1/messages/") == nil)
        #expect(template.match("chats/c1/message") == nil)
        #expect(template.match("chats/c1/messagesX") == nil)
        #expect(template.match("/chats/c1/messages") == nil)
        #expect(template.match("") == nil)
        let trailing = try TopicTemplate("users/{user}")
        #expect(trailing.match("users/") == nil)
        #expect(trailing.match("users/bob") == ["user": "bob"])
        #expect(try TopicTemplate("a//b").match("a//b") == [:])
    }

    @Test(arguments: ["users/{user}/badge", "{user}", "{user}/", "/{user}", "a//{user}//b", "tenant/x/{user}", "users/{user}/chats/{chat}", "static/topic"])
    func fillingEveryPlaceholderMatchesTheGeneralRender(_ text: String) throws {
        let template = try TopicTemplate(text)
        for value in ["bob", "grüße-🎉", ""] {
            let general = template.render(Dictionary(uniqueKeysWithValues: template.captureNames.map { ($0, value) }))
            #expect(template.render(filling: value) == general, "\(text) with \(value)")
        }
        #expect(try TopicTemplate("users/{user}/badge").render(filling: "u7") == "users/u7/badge")
    }

    @Test(arguments: ["users/{user/read", "users/+/read", "users/#", "chats/{chat}/{chat}", "users/x{user}/read", ""])
    func malformedTemplatesAreRejected(_ text: String) {
        #expect(throws: ConfigurationError.self) { try TopicTemplate(text) }
    }
}
