import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceRemote

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Responses are awaited on the client's one poller thread (`HTTP1Poller`),
/// not a thread per exchange: a burst of answers is one wake-up there, as
/// it is for curl (Benchmarks/RESULTS.md, "Remote clients at scale").
final class HTTP1PollerTests: XCTestCase {
  private static let ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

  /// Sixteen requests on warm connections, answered a second later: the
  /// process does not hold a thread per request meanwhile. Before the
  /// poller each waited on an exchange thread of its own (16 more threads).
  func testWarmRequestsInFlight_areAwaitedWithoutAThreadEach() async throws {
    let server = try ScriptedHTTPServer { _, request, _ in
      // The first requests together (so each opens a connection), the
      // second ones held while the test counts threads.
      Thread.sleep(forTimeInterval: request == 0 ? 0.3 : 1.0)
      return .send(Self.ok)
    }
    defer { server.stop() }
    let transport = HTTPTransport(maximumConnectionsPerHost: 16)
    let url = try server.url()
    let opened = await Self.burst(transport, url, 16)
    XCTAssertEqual(opened, 16)
    XCTAssertEqual(server.stats.withLock(\.connections), 16)
    let before = Self.threadCount()
    async let answered = Self.burst(transport, url, 16)
    try await Task.sleep(for: .milliseconds(500))
    let during = Self.threadCount()
    let warm = await answered
    XCTAssertEqual(warm, 16)
    XCTAssertEqual(server.stats.withLock(\.connections), 16, "every second request went on a warm connection")
    XCTAssertLessThan(during - before, 6, "threads while 16 warm requests waited: \(before) -> \(during)")
  }

  /// A request with a short deadline, made while the poller waits for one
  /// with a long deadline, ends at its own: the poller is woken to wait
  /// less, rather than sleeping until the long one's deadline.
  func testAShortDeadline_behindALongOne_endsOnTime() async throws {
    let server = try ScriptedHTTPServer { _, _, _ in .sendAndHold("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n") }
    defer { server.stop() }
    let transport = HTTPTransport()
    let request = URLRequest(url: try server.url())
    let long = transport.exchange(request, connectTimeout: .seconds(5), deadline: .now + .seconds(30))
    defer { long.cancel() }
    for try await event in long.events {
      if case .head = event { break }
    }
    let start = ContinuousClock.now
    let short = transport.exchange(request, connectTimeout: .seconds(5), deadline: .now + .milliseconds(300))
    var failure: (any Error)?
    do {
      for try await _ in short.events {}
    } catch {
      failure = error
    }
    XCTAssertEqual(failure as? TransportFailure, .deadlineExceeded, "\(String(describing: failure))")
    XCTAssertLessThan(ContinuousClock.now - start, .seconds(3))
  }

  /// Requests made while the poller waits are added to what it waits on
  /// without waking it: sixteen cold ones behind a held one, none wakes it.
  /// A wake per request would cost CPU on cores a busy server leaves the
  /// writing thread little of.
  func testRequestsMadeWhileThePollerWaits_doNotWakeIt() async throws {
    let server = try ScriptedHTTPServer { _, _, _ in
      Thread.sleep(forTimeInterval: 0.4)
      return .send(Self.ok)
    }
    defer { server.stop() }
    let nudges = Locked(0)
    let client = HTTP1Client(
      maximumConnectionsPerHost: 17, redirectPolicy: .never, onPollerNudge: { nudges.withLock { $0 += 1 } })
    let request = URLRequest(url: try server.url())
    let first = client.exchange(request, connectTimeout: .seconds(5), deadline: .now + .seconds(20))
    for _ in 0..<200 where !client.poller.isRunning { try await Task.sleep(for: .milliseconds(5)) }
    XCTAssertTrue(client.poller.isRunning, "the first request is awaited on the poller")
    let bodies = try await withThrowingTaskGroup(of: Data.self) { group in
      for _ in 0..<16 {
        group.addTask {
          try await client.exchange(request, connectTimeout: .seconds(5), deadline: .now + .seconds(20)).body()
        }
      }
      return try await group.reduce(into: [try await first.body()]) { $0.append($1) }
    }
    XCTAssertEqual(bodies, Array(repeating: Data("ok".utf8), count: 17))
    XCTAssertEqual(server.stats.withLock(\.connections), 17)
    XCTAssertEqual(nudges.withLock { $0 }, 0, "registrations that woke the poller")
  }

  /// A registration whose deadline comes before the end of the poller's
  /// wait wakes it, once: what the test above counts is counted.
  func testARequestWithAnEarlierDeadline_wakesThePollerOnce() async throws {
    let server = try ScriptedHTTPServer { _, _, _ in .sendAndHold("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n") }
    defer { server.stop() }
    let nudges = Locked(0)
    let client = HTTP1Client(
      maximumConnectionsPerHost: 2, redirectPolicy: .never, onPollerNudge: { nudges.withLock { $0 += 1 } })
    let request = URLRequest(url: try server.url())
    let long = client.exchange(request, connectTimeout: .seconds(5), deadline: .now + .seconds(30))
    defer { long.cancel() }
    for try await event in long.events {
      if case .head = event { break }
    }
    XCTAssertEqual(nudges.withLock { $0 }, 0, "the first registration started the thread, woke nothing")
    for _ in 0..<400 where !client.poller.isWaiting { try await Task.sleep(for: .milliseconds(5)) }
    XCTAssertTrue(client.poller.isWaiting, "the poller waits on the held response")
    let short = client.exchange(request, connectTimeout: .seconds(5), deadline: .now + .seconds(10))
    defer { short.cancel() }
    for try await event in short.events {
      if case .head = event { break }
    }
    XCTAssertEqual(nudges.withLock { $0 }, 1, "the earlier deadline woke the waiting poller")
  }

  /// The poller's thread ends when it has had nothing to wait for during
  /// its linger, and the next request starts it again.
  func testThePollersThread_endsWhenIdle_andStartsAgain() async throws {
    let server = try ScriptedHTTPServer { _, _, _ in .send(Self.ok) }
    defer { server.stop() }
    let client = HTTP1Client(maximumConnectionsPerHost: 4, redirectPolicy: .never, pollerLinger: .milliseconds(50))
    let request = URLRequest(url: try server.url())
    for round in 0..<3 {
      let exchange = client.exchange(request, connectTimeout: .seconds(5), deadline: .now + .seconds(10))
      let body = try await exchange.body()
      XCTAssertEqual(body, Data("ok".utf8), "round \(round)")
      for _ in 0..<200 where client.poller.isRunning { try await Task.sleep(for: .milliseconds(10)) }
      XCTAssertFalse(client.poller.isRunning, "round \(round): the thread ended once idle")
    }
  }

  /// The OS refusing the wake pipe fails the request that needed it with a
  /// typed error, frees its connection slot, and the next request makes
  /// the pipe and is answered (one slot: a leaked one would hang it).
  func testARefusedWakePipe_failsThatRequest_andTheNextOneMakesIt() async throws {
    let server = try ScriptedHTTPServer { _, _, _ in .send(Self.ok) }
    defer { server.stop() }
    let refusals = Locked(1)
    let client = HTTP1Client(
      maximumConnectionsPerHost: 1, redirectPolicy: .never,
      wakePipe: {
        let refused = refusals.withLock { count in
          defer { count -= 1 }
          return count > 0
        }
        return refused ? nil : HTTP1Poller.systemPipe()
      })
    let request = URLRequest(url: try server.url())
    var failure: (any Error)?
    do {
      let exchange = client.exchange(request, connectTimeout: .seconds(5), deadline: .now + .seconds(10))
      for try await _ in exchange.events {}
    } catch {
      failure = error
    }
    XCTAssertEqual((failure as? URLError)?.code, .resourceUnavailable, "\(String(describing: failure))")
    XCTAssertEqual(refusals.withLock { $0 }, 0, "the pipe was asked for once")
    let exchange = client.exchange(request, connectTimeout: .seconds(5), deadline: .now + .seconds(10))
    let body = try await exchange.body()
    XCTAssertEqual(body, Data("ok".utf8))
  }

  /// A server that sends a body faster than its consumer reads it: the
  /// client stops reading that socket once `readAheadBytes` wait unread in
  /// the stream, so memory holds that and the sockets' buffers, not the
  /// whole body; once the consumer goes on, so does the reading. Before,
  /// the poller read everything the server sent (hundreds of MiB a second
  /// on loopback) into the stream's buffer.
  func testABodyFasterThanItsConsumer_isReadOnlyAsFarAsTheReadAhead() async throws {
    let total = 256 << 20
    let server = try ScriptedHTTPServer { _, _, _ in
      .flood(head: "HTTP/1.1 200 OK\r\nContent-Length: \(total)\r\n\r\n", bytes: total)
    }
    defer { server.stop() }
    let client = HTTP1Client(maximumConnectionsPerHost: 1, redirectPolicy: .never)
    let exchange = client.exchange(
      URLRequest(url: try server.url()), connectTimeout: .seconds(5), deadline: .now + .seconds(30))
    defer { exchange.cancel() }
    var events = exchange.events.makeAsyncIterator()
    var received = 0
    while received == 0, let event = try await events.next() {
      if case .body(let data) = event { received += data.count }
    }
    // The consumer stops for a second while the server sends.
    try await Task.sleep(for: .seconds(1))
    let sentWhileStopped = server.stats.withLock(\.floodedBytes)
    // The read-ahead and both sockets' buffers (a few MiB each by default):
    // far under what a reader that never stops takes in a second (all 256).
    XCTAssertLessThan(sentWhileStopped, 64 << 20, "bytes the server got into the socket while nobody read")
    // It reads on: the reading goes on too, past what was sent while it waited.
    while received < sentWhileStopped + (8 << 20), let event = try await events.next() {
      if case .body(let data) = event { received += data.count }
    }
    XCTAssertGreaterThanOrEqual(received, sentWhileStopped + (8 << 20))
  }

  /// A chunked body in one-byte chunks (`1\r\nx\r\n`: six bytes on the
  /// wire a byte of body), as fast as the server can send it: the consumer
  /// reads the body alone, gathered a read at a time into few events, not
  /// one event (and one allocation) a byte.
  func testABodyOfOneByteChunks_arrivesWithoutItsFraming_inFewEvents() async throws {
    let server = try ScriptedHTTPServer { _, _, _ in
      .flood(head: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", bytes: 1 << 30, unit: "1\r\nx\r\n")
    }
    defer { server.stop() }
    let client = HTTP1Client(maximumConnectionsPerHost: 1, redirectPolicy: .never)
    let exchange = client.exchange(
      URLRequest(url: try server.url()), connectTimeout: .seconds(5), deadline: .now + .seconds(60))
    defer { exchange.cancel() }
    var (received, bodies) = (0, 0)
    for try await event in exchange.events {
      guard case .body(let data) = event else { continue }
      XCTAssertEqual(data, Data(repeating: UInt8(ascii: "x"), count: data.count), "chunk framing in the body")
      (received, bodies) = (received + data.count, bodies + 1)
      if received >= 256 << 10 { break }
    }
    XCTAssertGreaterThanOrEqual(received, 256 << 10)
    XCTAssertLessThan(bodies, received / 1024, "\(bodies) events for \(received) bytes of body")
  }

  /// A server that resets the connection while the poller has left it
  /// unread (its consumer behind): no CPU is spent on it meanwhile, and the
  /// consumer gets what was read, then `networkConnectionLost` as soon as
  /// it catches up, not at the exchange's deadline a minute later.
  func testAResetWhileTheReadingWaits_endsTheResponseOnceTheConsumerCatchesUp() async throws {
    let total = 256 << 20
    let server = try ScriptedHTTPServer { _, _, _ in
      .flood(head: "HTTP/1.1 200 OK\r\nContent-Length: \(total)\r\n\r\n", bytes: total, reset: true)
    }
    defer { server.stop() }
    let client = HTTP1Client(maximumConnectionsPerHost: 1, redirectPolicy: .never)
    let exchange = client.exchange(
      URLRequest(url: try server.url()), connectTimeout: .seconds(5), deadline: .now + .seconds(60))
    defer { exchange.cancel() }
    var events = exchange.events.makeAsyncIterator()
    var received = 0
    while received == 0, let event = try await events.next() {
      if case .body(let data) = event { received += data.count }
    }
    // The server floods until the client stops taking bytes, then resets.
    let waited = ContinuousClock.now
    while server.stats.withLock(\.resets) == 0, ContinuousClock.now - waited < .seconds(20) {
      try await Task.sleep(for: .milliseconds(50))
    }
    XCTAssertEqual(server.stats.withLock(\.resets), 1, "the server saw the client stop reading and reset")
    XCTAssertLessThan(server.stats.withLock(\.floodedBytes), total)
    // A reset socket is always ready (its error); left in the set, it
    // would have the poller spin on it while the consumer is behind.
    let cpuBefore = Self.processCPU()
    try await Task.sleep(for: .milliseconds(600))
    let spent = Self.processCPU() - cpuBefore
    XCTAssertLessThan(spent, .milliseconds(200), "CPU spent while the consumer was behind")
    let start = ContinuousClock.now
    var failure: (any Error)?
    do {
      while let event = try await events.next() {
        if case .body(let data) = event { received += data.count }
      }
    } catch {
      failure = error
    }
    XCTAssertEqual((failure as? URLError)?.code, .networkConnectionLost, "\(String(describing: failure))")
    XCTAssertGreaterThanOrEqual(received, HTTP1Client.readAheadBytes)
    XCTAssertLessThan(ContinuousClock.now - start, .seconds(10), "the reset was seen when the consumer caught up")
  }

  /// Cancelling a response whose socket the poller stopped reading (its
  /// consumer behind) ends it at once: the one connection slot is free for
  /// the next request, not held until the first one's deadline.
  func testCancellingAResponseNotBeingRead_freesItsSlotAtOnce() async throws {
    let total = 256 << 20
    let server = try ScriptedHTTPServer { connection, _, _ in
      guard connection == 0 else { return .send(Self.ok) }
      return .flood(head: "HTTP/1.1 200 OK\r\nContent-Length: \(total)\r\n\r\n", bytes: total)
    }
    defer { server.stop() }
    let client = HTTP1Client(maximumConnectionsPerHost: 1, redirectPolicy: .never)
    let request = URLRequest(url: try server.url())
    let flooded = client.exchange(request, connectTimeout: .seconds(5), deadline: .now + .seconds(60))
    var events = flooded.events.makeAsyncIterator()
    while let event = try await events.next() {
      if case .body = event { break }
    }
    // Until the server's sending has stalled for three looks in a row
    // (600 ms, not a busy moment of the poller): it has stopped reading.
    var sent = server.stats.withLock(\.floodedBytes)
    var still = 0
    while still < 3 {
      try await Task.sleep(for: .milliseconds(200))
      let now = server.stats.withLock(\.floodedBytes)
      still = now == sent ? still + 1 : 0
      sent = now
    }
    XCTAssertLessThan(sent, total)
    XCTAssertGreaterThanOrEqual(sent, HTTP1Client.readAheadBytes)
    flooded.cancel()
    let start = ContinuousClock.now
    let next = client.exchange(request, connectTimeout: .seconds(5), deadline: .now + .seconds(20))
    let body = try await next.body()
    XCTAssertEqual(body, Data("ok".utf8))
    XCTAssertLessThan(ContinuousClock.now - start, .seconds(5), "the slot came free when the first was cancelled")
  }

  /// `count` GET requests at once; how many were answered "ok".
  private static func burst(_ transport: HTTPTransport, _ url: URL, _ count: Int) async -> Int {
    await withTaskGroup(of: Bool.self) { group in
      for _ in 0..<count {
        group.addTask {
          let exchange = transport.exchange(
            URLRequest(url: url), connectTimeout: .seconds(5), deadline: .now + .seconds(20))
          return (try? await exchange.body()) == Data("ok".utf8)
        }
      }
      return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
    }
  }

  /// The threads of this process.
  private static func threadCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
  }

  /// The process's CPU time, user and system.
  private static func processCPU() -> Duration {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let seconds = Int64(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
    let micros = Int64(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
    return .seconds(seconds) + .microseconds(micros)
  }
}
