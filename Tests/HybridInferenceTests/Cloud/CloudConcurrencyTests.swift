import Foundation
import HybridInference
import XCTest

/// One model instance serves many requests at once (FoundationNetworking has
/// had multi-handle bugs under concurrency; this is the guard against them).
final class CloudConcurrencyTests: CloudTestCase {
  func test32ConcurrentRequestsOnOneModel_unaryAndStreaming() async throws {
    let model = server.model("echo")
    let results = try await withThrowingTaskGroup(of: (Int, String).self) { group in
      for index in 0..<32 {
        group.addTask {
          let session = GenerativeModelSession(model: model, logHandler: .silent)
          if index.isMultiple(of: 2) {
            return (index, try await session.respond(to: "prompt \(index)").content)
          }
          return (index, try await session.streamResponse(to: "prompt \(index)").collect().content)
        }
      }
      var results: [Int: String] = [:]
      for try await (index, content) in group { results[index] = content }
      return results
    }
    XCTAssertEqual(results.count, 32)
    for index in 0..<32 {
      XCTAssertEqual(results[index], "echo: prompt \(index)", "each answer is routed to its own request")
    }
  }

  func testConcurrentRequestsAcrossRepeatedRounds_stayCorrect() async throws {
    let model = server.model("echo")
    for round in 0..<3 {
      try await withThrowingTaskGroup(of: Void.self) { group in
        for index in 0..<32 {
          group.addTask {
            let content = try await model.streamResponse(
              to: ModelRequest(transcript: Transcript(entries: [.prompt("r\(round) p\(index)")]))
            ).reduce(into: "") { $0 += $1.text }
            XCTAssertEqual(content, "echo: r\(round) p\(index)")
          }
        }
        try await group.waitForAll()
      }
    }
  }
}
