import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// `RequestOptions.maximumConnectionsPerHost` is the number of sockets a
/// model opens to its server, counted from the kernel's table while every
/// request is held by the server (issue 22: at a fleet's scale the limit
/// decides whether a request waits inside FoundationNetworking).
final class CloudConnectionLimitTests: CloudTestCase {
  /// Eight requests the server holds for a second each, at once; the most
  /// connections seen open to it meanwhile, and how many were answered.
  private func connectionsWhileHeld(_ options: RequestOptions) async throws -> (peak: Int, answers: Int) {
    let model = server.model("echo~first-1000", requestOptions: options)
    let port = server.port
    let sampler = Task {
      var peak = 0
      while !Task.isCancelled {
        peak = max(peak, establishedConnections(toPort: port))
        try? await Task.sleep(for: .milliseconds(50))
      }
      return peak
    }
    let answers = try await withThrowingTaskGroup(of: Void.self) { group in
      for index in 0..<8 {
        group.addTask {
          _ = try await model.respond(to: ModelRequest(transcript: Transcript(entries: [.prompt("held \(index)")])))
        }
      }
      var answers = 0
      for try await _ in group { answers += 1 }
      return answers
    }
    sampler.cancel()
    return (await sampler.value, answers)
  }

  func testTheLimitIsTheNumberOfConnectionsOpened() async throws {
    var limited = RequestOptions.fastTests
    limited.maximumConnectionsPerHost = 3
    let few = try await connectionsWhileHeld(limited)
    XCTAssertEqual(few.answers, 8, "requests past the limit wait for a connection, then are answered")
    XCTAssertEqual(few.peak, 3, "no more connections than the limit")

    var roomy = RequestOptions.fastTests
    roomy.maximumConnectionsPerHost = 8
    let many = try await connectionsWhileHeld(roomy)
    XCTAssertEqual(many.answers, 8)
    XCTAssertEqual(many.peak, 8, "one connection per request in flight up to the limit")
  }

  func testBothBackendsOpenWhatTheirOptionsSay() {
    var options = RequestOptions()
    XCTAssertEqual(options.maximumConnectionsPerHost, 32, "the default, kept")
    options.maximumConnectionsPerHost = 200
    let gemini = CloudGeminiModel(
      name: "echo", apiKey: "k", baseURL: server.baseURL, requestOptions: options, logHandler: .silent)
    let openAI = OpenAICompatibleModel(
      name: "m", baseURL: server.baseURL, apiKey: nil, requestOptions: options, logHandler: .silent)
    XCTAssertEqual(gemini.shell.transport.maximumConnectionsPerHost, 200)
    XCTAssertEqual(openAI.shell.transport.maximumConnectionsPerHost, 200)
  }

  func testAHostileLimitIsClamped() {
    XCTAssertEqual(HTTPTransport(maximumConnectionsPerHost: 0).maximumConnectionsPerHost, 1, "0 is libcurl's unlimited")
    XCTAssertEqual(HTTPTransport(maximumConnectionsPerHost: -5).maximumConnectionsPerHost, 1)
    XCTAssertEqual(HTTPTransport(maximumConnectionsPerHost: .max).maximumConnectionsPerHost, 1024)
  }
}

/// Client sockets in ESTABLISHED state whose remote port is `port`
/// (/proc/net/tcp and tcp6), this process's and any other's, each counted
/// once by its local address and port.
///
/// Why distinct: the kernel writes the table a page per `read`, and walks
/// it again from a position between reads, so a table that changes
/// meanwhile (a whole suite's connections in TIME_WAIT make it many pages)
/// can list a socket twice. Counting lines once read 15 connections where 8
/// were open, in one full run of the suite.
private func establishedConnections(toPort port: Int) -> Int {
  let tables = ["/proc/net/tcp", "/proc/net/tcp6"].map(readWhole)
  let remote = String(format: ":%04X", port)
  let locals = tables.flatMap { $0.split(separator: "\n").dropFirst() }.compactMap { line -> Substring? in
    let fields = line.split(separator: " ")
    return fields.count > 3 && fields[2].hasSuffix(remote) && fields[3] == "01" ? fields[1] : nil
  }
  return Set(locals).count
}

/// A /proc file whole: its size reads as 0, so it is read until EOF rather
/// than by its size (String(contentsOfFile:) may stop at the first page).
private func readWhole(_ path: String) -> String {
  let descriptor = open(path, O_RDONLY)
  guard descriptor >= 0 else { return "" }
  defer { close(descriptor) }
  var bytes: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 65536)
  while true {
    let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
    guard count > 0 else { break }
    bytes += chunk[0..<count]
  }
  return String(decoding: bytes, as: UTF8.self)
}
