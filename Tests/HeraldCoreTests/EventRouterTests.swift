import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Testing

@Suite("Router semantics through a real store, SQLite and PostgreSQL")
struct EventRouterTests {
    @Test(arguments: StoreBackend.allCases) func messageNotifiesEveryMemberButTheSenderWithPreviewAndBadge(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        try await offCooperativePool {
            let outputs = try harness.outputs(message("c1", "m1", from: "alice", to: ["bob", "carol"], body: "hi"))
            let notifications = outputs.compactMap(\.notification)
            #expect(notifications.map(\.recipient) == ["bob", "carol"])
            #expect(notifications.allSatisfy { $0.preview == "hi" && $0.badgeTotal == 1 && $0.sender == "alice" && $0.messageID == "m1" })
            #expect(outputs.compactMap(\.badgeUpdate).map(\.recipient) == ["bob", "carol"])
            #expect(try harness.badge("bob") == BadgeUpdate(recipient: "bob", unread: 1, chats: ["c1": 1]))
            #expect(try harness.badge("alice").unread == 0)
        }
    }

    @Test(arguments: StoreBackend.allCases) func badgesAreQueuedOncePerUserPerCommitWithTheLatestCount(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        try await offCooperativePool {
            let outputs = try harness.outputs(message("c1", "m1", from: "alice", to: ["bob"], at: 1000),
                                              message("c2", "m2", from: "carol", to: ["bob", "dave"], at: 2000),
                                              read("bob", "c1", upTo: "m1"),
                                              message("c2", "m3", from: "carol", to: ["bob", "dave"], at: 3000))
            // Notifications still carry the count as it was after their own message.
            #expect(outputs.compactMap(\.notification).filter { $0.recipient == "bob" }.map(\.badgeTotal) == [1, 2, 2])
            // One badge per user, with the count after the whole commit, after every other output, in the
            // order the users' counts first changed.
            #expect(outputs.compactMap(\.badgeUpdate) == [
                BadgeUpdate(recipient: "bob", unread: 2, chats: ["c2": 2]),
                BadgeUpdate(recipient: "dave", unread: 2, chats: ["c2": 2]),
            ])
            #expect(outputs.suffix(2).allSatisfy { $0.badgeUpdate != nil })
            #expect(try harness.badge("bob") == BadgeUpdate(recipient: "bob", unread: 2, chats: ["c2": 2]))
        }
    }

    @Test(arguments: StoreBackend.allCases) func receiptsAreQueuedOncePerReaderSenderAndChatPerCommitTheLatestInItsPlace(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        try await offCooperativePool {
            // alice and bob take turns in c1 while carol reads c2: each reply moves its sender past the
            // other's messages and owes them a receipt.
            try harness.apply(message("c2", "n1", from: "dave", to: ["carol"], at: 500))
            let outputs = try harness.outputs(message("c1", "m1", from: "alice", to: ["bob"], at: 1000),
                                              message("c1", "m2", from: "bob", to: ["alice"], at: 2000),
                                              message("c1", "m3", from: "alice", to: ["bob"], at: 3000),
                                              read("carol", "c2", upTo: "n1"),
                                              message("c1", "m4", from: "bob", to: ["alice"], at: 4000),
                                              message("c1", "m5", from: "bob", to: ["alice"], at: 5000))
            func receipt(to recipient: UserID, upTo: MessageID, by reader: UserID, in chat: ChatID = "c1", at time: Int64) -> ReadReceipt {
                ReadReceipt(recipient: recipient, chat: chat, upTo: upTo, reader: reader, readAt: Timestamp(milliseconds: time))
            }
            // bob's receipt for m2 to alice gives way to his receipt for m4; m5 covers no message of hers.
            #expect(outputs.compactMap(\.receipt) == [
                receipt(to: "bob", upTo: "m3", by: "alice", at: 3000),
                receipt(to: "dave", upTo: "n1", by: "carol", in: "c2", at: 5000),
                receipt(to: "alice", upTo: "m4", by: "bob", at: 4000),
            ])
            // Every other output stays where it was: the latest receipt sits where it was queued.
            let kinds = outputs.filter { $0.badgeUpdate == nil }.map { output -> String in
                if let receipt = output.receipt { return "receipt \(receipt.upTo) to \(receipt.recipient)" }
                return output.notification.map { "notification \($0.messageID) to \($0.recipient)" } ?? "\(output)"
            }
            #expect(kinds == ["notification m1 to bob", "notification m2 to alice", "receipt m3 to bob", "notification m3 to bob",
                              "receipt n1 to dave", "receipt m4 to alice", "notification m4 to alice", "notification m5 to alice"])
        }
    }

    @Test(arguments: StoreBackend.allCases) func aReadOverManySendersSendsEachOfThemOneReceiptInOrder(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        try await offCooperativePool {
            // 24 senders, more than a receipt's senders are kept in an array for: each writes twice, out of
            // order, some before the read's commit (stored ranges) and some in it (the batch's messages).
            let senders = (0..<24).map { UserID("s\(($0 * 7) % 24 + 10)") }
            let stored = senders.enumerated().map { index, sender in
                message("big", MessageID("a\(index)"), from: sender, to: ["zed"], at: Int64(1000 + index))
            }
            try harness.apply(Array(stored[..<16]))
            let later = senders.enumerated().map { index, sender in
                message("big", MessageID("b\(index)"), from: sender, to: ["zed"], at: Int64(2000 + index))
            }
            var batch = Array(stored[16...]) + later.reversed()
            batch.append(read("zed", "big", upTo: "b23"))
            // Each sender's own messages move their position too, with receipts to the others: zed's are apart.
            let receipts = try harness.outputs(batch).compactMap(\.receipt).filter { $0.reader == "zed" }
            #expect(receipts.map(\.recipient) == senders.sorted())
            #expect(receipts.allSatisfy { $0.upTo == "b23" })
        }
    }

    @Test(arguments: StoreBackend.allCases) func duplicateMessageHasNoEffectAndIsCounted(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        try await offCooperativePool {
            try harness.apply(message("c1", "m1", from: "alice", to: ["bob"]))
            try harness.drain()
            let report = try harness.apply(message("c1", "m1", from: "alice", to: ["bob"]))
            #expect(report.duplicates == 1 && report.applied == 0 && report.outputs == 0)
            #expect(try harness.drain().isEmpty)
            #expect(try harness.badge("bob").unread == 1)
        }
    }

    @Test(arguments: StoreBackend.allCases) func readSendsReceiptsToSendersAndClearsTheReadersBadge(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        try await offCooperativePool {
            try harness.apply(message("c1", "m1", from: "alice", to: ["bob", "carol"], at: 1000),
                              message("c1", "m2", from: "carol", to: ["bob", "alice"], at: 2000),
                              message("c1", "m3", from: "alice", to: ["bob", "carol"], at: 3000))
            let outputs = try harness.outputs(read("bob", "c1", upTo: "m2"))
            #expect(outputs.compactMap(\.receipt).map(\.recipient) == ["alice", "carol"])
            #expect(outputs.compactMap(\.receipt).allSatisfy { $0.upTo == "m2" && $0.reader == "bob" })
            #expect(outputs.compactMap(\.badgeUpdate) == [BadgeUpdate(recipient: "bob", unread: 1, chats: ["c1": 1])])
        }
    }

    @Test(arguments: StoreBackend.allCases) func readPositionNeverMovesBack(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        try await offCooperativePool {
            try harness.apply(message("c1", "m1", from: "alice", to: ["bob"], at: 1000),
                              message("c1", "m2", from: "alice", to: ["bob"], at: 2000),
                              read("bob", "c1", upTo: "m2"))
            let report = try harness.apply(read("bob", "c1", upTo: "m1"))
            #expect(report.duplicates == 1)
            #expect(try harness.badge("bob").unread == 0)
        }
    }

    @Test(arguments: StoreBackend.allCases) func lateMessageAtOrBeforeTheReadPositionCountsAsRead(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        try await offCooperativePool {
            try harness.apply(message("c1", "m5", from: "alice", to: ["bob"], at: 5000), read("bob", "c1", upTo: "m5"))
            let outputs = try harness.outputs(message("c1", "m3", from: "alice", to: ["bob"], at: 3000))
            #expect(outputs.isEmpty)
            #expect(try harness.badge("bob").unread == 0)
        }
    }

    @Test(arguments: StoreBackend.allCases) func messagesWithTheSameTimeAreOrderedById(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        try await offCooperativePool {
            try harness.apply(message("c1", "b", from: "alice", to: ["bob"], at: 1000), read("bob", "c1", upTo: "b"))
            try harness.apply(message("c1", "a", from: "alice", to: ["bob"], at: 1000), message("c1", "c", from: "alice", to: ["bob"], at: 1000))
            #expect(try harness.badge("bob").unread == 1)  // only "c" is after (1000, "b")
        }
    }

    @Test(arguments: StoreBackend.allCases) func openChatGetsALiveMessageUntilClosedOrExpired(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend, policy: RouterPolicy(presenceTTLMilliseconds: 60_000))
        try await offCooperativePool {
            try harness.apply(.chatOpened(ChatFocus(user: "bob", chat: "c1")))
            let live = try harness.outputs(message("c1", "m1", from: "alice", to: ["bob"]))
            #expect(live.compactMap(\.live).map(\.recipient) == ["bob"])
            #expect(live.compactMap(\.notification).isEmpty)
            #expect(try harness.badge("bob").unread == 1)  // still unread until the client reports the read

            harness.clock.advance(milliseconds: 60_001)
            let expired = try harness.outputs(message("c1", "m2", from: "alice", to: ["bob"], at: 2000))
            #expect(expired.compactMap(\.notification).map(\.recipient) == ["bob"])

            try harness.apply(.chatOpened(ChatFocus(user: "bob", chat: "c1")), .chatClosed(ChatFocus(user: "bob", chat: "c1")))
            let closed = try harness.outputs(message("c1", "m3", from: "alice", to: ["bob"], at: 3000))
            #expect(closed.compactMap(\.notification).map(\.recipient) == ["bob"])
        }
    }

    @Test(arguments: StoreBackend.allCases) func declaredMembersWinOverRecipients(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        try await offCooperativePool {
            try harness.apply(.chatCreated(ChatCreated(chat: "c1", members: ["alice", "bob", "carol"])))
            let outputs = try harness.outputs(message("c1", "m1", from: "alice", to: ["mallory"]))
            #expect(outputs.compactMap(\.notification).map(\.recipient) == ["bob", "carol"])
            #expect(try harness.badge("mallory").unread == 0)
        }
    }

    @Test(arguments: StoreBackend.allCases) func chatCreatedAfterMessagesRecountsMembers(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        try await offCooperativePool {
            try harness.apply(message("c1", "m1", from: "alice", to: ["bob"]), message("c1", "m2", from: "alice", to: ["bob"], at: 2000))
            let outputs = try harness.outputs(.chatCreated(ChatCreated(chat: "c1", members: ["alice", "carol"])))
            #expect(Set(outputs.compactMap(\.badgeUpdate)) == [
                BadgeUpdate(recipient: "bob", unread: 0, chats: [:]), BadgeUpdate(recipient: "carol", unread: 2, chats: ["c1": 2]),
            ])
        }
    }

    @Test(arguments: StoreBackend.allCases) func readBeforeItsMessageResolvesWhenTheMessageArrives(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        try await offCooperativePool {
            try harness.apply(read("bob", "c1", upTo: "m2"))
            let outputs = try harness.outputs(message("c1", "m1", from: "alice", to: ["bob"], at: 1000),
                                              message("c1", "m2", from: "alice", to: ["bob"], at: 2000))
            #expect(try harness.badge("bob").unread == 0)
            #expect(outputs.compactMap(\.receipt).map(\.recipient).contains("alice"))
        }
    }

    @Test(arguments: StoreBackend.allCases) func readBeforeItsMessageResolvesAfterTheWriterHadSeenNoPendingReads(_ backend: StoreBackend) async throws {
        // The writer remembers which chats have reads waiting; a read queued after it learned "none"
        // must still be found when its message arrives.
        let harness = try await RouterHarness(backend)
        try await offCooperativePool {
            try harness.apply(message("c2", "x1", from: "alice", to: ["bob"], at: 500))
            try harness.apply(read("bob", "c1", upTo: "m1"))
            try harness.apply(message("c2", "x2", from: "alice", to: ["bob"], at: 600))
            let outputs = try harness.outputs(message("c1", "m1", from: "alice", to: ["bob"], at: 1000))
            #expect(try harness.badge("bob") == BadgeUpdate(recipient: "bob", unread: 2, chats: ["c2": 2]))
            #expect(outputs.compactMap(\.receipt).map(\.recipient) == ["alice"])
        }
    }

    @Test(arguments: StoreBackend.allCases) func anEmptyBodyIsStoredAsEmptyText(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        try await offCooperativePool {
            let outputs = try harness.outputs(message("c1", "m1", from: "alice", to: ["bob"], body: ""))
            #expect(outputs.compactMap(\.notification).map(\.preview) == [""])
            #expect(try harness.store.containsMessage(chat: "c1", id: "m1"))
        }
    }

    @Test(arguments: StoreBackend.allCases) func previewIsCutTo120CharactersWithAnEllipsis(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        try await offCooperativePool {
            let body = String(repeating: "é", count: 300)
            let preview = try harness.outputs(message("c1", "m1", from: "alice", to: ["bob"], body: body)).compactMap(\.notification)[0].preview
            #expect(preview.count == 120)
            #expect(preview.hasSuffix("…"))
        }
    }

    @Test(arguments: StoreBackend.allCases) func rejectedRecordGoesToTheDeadLetterQueueAndTheRestOfTheBatchApplies(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        try await offCooperativePool {
            let bad = SourceRecord(provenance: Provenance(adapter: "a", origin: "o", rawSize: 3, receivedAt: harness.clock.now()),
                                   outcome: .rejected(Rejection(.malformedJSON, "nope")), raw: Array("{{{".utf8))
            let report = try harness.router.commit([bad, harness.record(message("c1", "m1", from: "alice", to: ["bob"]))])
            #expect(report.deadLettered == 1 && report.applied == 1)
            let letters = try harness.store.deadLetters(limit: 10, includeReplayed: false)
            #expect(letters.map(\.rejection.reason) == [.malformedJSON])
            #expect(letters.first?.raw == Array("{{{".utf8))
            #expect(try harness.badge("bob").unread == 1)
            // What a metrics scrape reads follows the letter until it is replayed.
            #expect(try harness.store.openDeadLetterCount() == 1)
            try harness.store.markReplayed(deadLetter: try #require(letters.first).id, at: harness.clock.now())
            #expect(try harness.store.openDeadLetterCount() == 0)
        }
    }

    @Test(arguments: StoreBackend.allCases) func aReadFromSomeoneOutsideTheDeclaredMembersIsDeadLettered(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        try await offCooperativePool {
            try harness.apply(.chatCreated(ChatCreated(chat: "c1", members: ["alice", "bob"])),
                              message("c1", "m1", from: "alice", to: ["bob"]))
            try harness.drain()
            // In a later batch, so the declared members come from the store, not from the batch itself.
            let report = try harness.router.commit([harness.record(read("mallory", "c1", upTo: "m1")),
                                                    harness.record(read("bob", "c1", upTo: "m1"))])
            #expect(report.deadLettered == 1 && report.applied == 1)
            let letters = try harness.store.deadLetters(limit: 10, includeReplayed: false)
            #expect(letters.map(\.rejection.reason) == [.notAMember])
            #expect(letters.first?.rejection.detail == "mallory is not a member of chat c1")
            // Only bob's read reached alice, and the refused read left nothing behind: once mallory is
            // added, m1 is unread for her.
            #expect(try harness.drain().compactMap(\.receipt).map(\.reader) == ["bob"])
            try harness.apply(.chatCreated(ChatCreated(chat: "c1", members: ["mallory"])))
            #expect(try harness.badge("mallory").unread == 1)
        }
    }

    @Test(arguments: StoreBackend.allCases) func readsAreLetInUntilTheChatsMembersAreDeclared(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        try await offCooperativePool {
            try harness.apply(message("c1", "m1", from: "alice", to: ["bob"]))
            // Members inferred from messages only: anyone's read applies (nothing says who belongs).
            #expect(try harness.apply(read("carol", "c1", upTo: "m1")).applied == 1)
            try harness.apply(.chatCreated(ChatCreated(chat: "c1", members: ["alice", "bob"])))
            #expect(try harness.apply(read("carol", "c1", upTo: "m1")).deadLettered == 1)
            try harness.apply(.chatCreated(ChatCreated(chat: "c1", members: ["carol"])))
            #expect(try harness.apply(read("carol", "c1", upTo: "m1")).duplicates == 1)
        }
    }

    @Test(arguments: StoreBackend.allCases) func replyingMarksTheChatReadForTheSenderAndSendsReceipts(_ backend: StoreBackend) async throws {
        // alice writes m1, carol replies m2: carol has seen m1, so it is not unread for her.
        let harness = try await RouterHarness(backend)
        try await offCooperativePool {
            try harness.apply(.chatCreated(ChatCreated(chat: "c1", members: ["alice", "bob", "carol"])),
                              message("c1", "m1", from: "alice", at: 1000))
            let outputs = try harness.outputs(message("c1", "m2", from: "carol", at: 2000))
            #expect(try harness.badge("carol") == BadgeUpdate(recipient: "carol", unread: 0, chats: [:]))
            // Her counter for c1 fell to 0, so it has no row any more (a row of 0 would be a line here).
            #expect(try harness.store.modelSnapshot().filter { $0.hasPrefix("u|carol|") }.isEmpty)
            #expect(try harness.badge("bob") == BadgeUpdate(recipient: "bob", unread: 2, chats: ["c1": 2]))
            #expect(try harness.badge("alice") == BadgeUpdate(recipient: "alice", unread: 1, chats: ["c1": 1]))
            #expect(outputs.compactMap(\.receipt) == [
                ReadReceipt(recipient: "alice", chat: "c1", upTo: "m2", reader: "carol", readAt: Timestamp(milliseconds: 2000)),
            ])
            #expect(outputs.compactMap(\.badgeUpdate).map(\.recipient).sorted() == ["alice", "bob", "carol"])
        }
    }

    @Test(arguments: StoreBackend.allCases) func aLateOwnMessageNeverMovesTheSendersPositionBack(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        try await offCooperativePool {
            try harness.apply(message("c1", "m1", from: "alice", to: ["bob"], at: 1000),
                              message("c1", "m5", from: "alice", to: ["bob"], at: 5000),
                              read("bob", "c1", upTo: "m5"))
            let outputs = try harness.outputs(message("c1", "m3", from: "bob", to: ["alice"], at: 3000))
            #expect(outputs.compactMap(\.receipt).isEmpty)
            #expect(try harness.badge("bob").unread == 0)
            // alice's own m5 put her position past m3, so the late m3 counts as read for her too.
            #expect(try harness.badge("alice").unread == 0)
            #expect(outputs.compactMap(\.notification).isEmpty)
        }
    }
}
