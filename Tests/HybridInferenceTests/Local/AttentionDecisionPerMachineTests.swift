import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceLlama

/// `.automatic` flash attention is decided once per machine: the first
/// process measures and stores the decision in the machine's directory
/// (`HYBRID_INFERENCE_ATTENTION_DIR`, here a directory of the test's own), a
/// second process reads it back rather than measure again, without any
/// prompt cache, and both answer a greedy request alike.
final class AttentionDecisionPerMachineTests: XCTestCase {
  private static let answerMarker = "GREEDY-ANSWER:"
  private static let decisionMarker = "ATTENTION-DECISION:"

  func testASecondProcess_reusesTheFirstsDecision_andAnswersAlike() async throws {
    let path = try LocalTestModels.require(LocalTestModels.tinyPath)
    if ChildProcess.isChild(of: self) { return try await Self.scenario(path: path) }
    let directory = URL(fileURLWithPath: NSTemporaryDirectory())
      .appendingPathComponent("attention-machine-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let environment = [AttentionCalibrationStore.directoryVariable: directory.path]

    let first = try ChildProcess.run(self, environment: environment)
    XCTAssertEqual(first.status, 0, first.log.suffix(2000).description)
    let files = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter {
      $0.hasPrefix("attention-")
    }
    XCTAssertEqual(files.count, 1, "the first process stored its decision: \(files)")
    let file = directory.appendingPathComponent(files.first ?? "none").path
    var status = stat()
    XCTAssertEqual(lstat(file, &status), 0)
    XCTAssertEqual(status.st_mode & 0o777, 0o600)
    let stored = FileManager.default.contents(atPath: file)

    let second = try ChildProcess.run(self, environment: environment)
    XCTAssertEqual(second.status, 0, second.log.suffix(2000).description)
    func line(_ marker: String, _ log: String) -> String? {
      log.split(separator: "\n").first { $0.hasPrefix(marker) }.map { String($0.dropFirst(marker.count)) }
    }
    let firstDecision = try XCTUnwrap(line(Self.decisionMarker, first.log), first.log.suffix(2000).description)
    let secondDecision = try XCTUnwrap(line(Self.decisionMarker, second.log), second.log.suffix(2000).description)
    XCTAssertFalse(firstDecision.contains(", stored"), "the first process measured: \(firstDecision)")
    XCTAssertTrue(secondDecision.contains(", stored"), "the second process read the decision: \(secondDecision)")
    XCTAssertEqual(FileManager.default.contents(atPath: file), stored, "the second process did not measure again")
    let firstAnswer = try XCTUnwrap(line(Self.answerMarker, first.log))
    XCTAssertFalse(firstAnswer.isEmpty)
    XCTAssertEqual(line(Self.answerMarker, second.log), firstAnswer)
  }

  /// The child's half: a greedy answer from `.automatic`, without a prompt
  /// cache, printed with the attention decision the context was made with.
  private static func scenario(path: String) async throws {
    let logs = LogRecorder()
    LocalSystemModel.setLlamaLogHandler(logs.handler)
    defer { LocalSystemModel.setLlamaLogHandler(.silent) }
    let model = LocalSystemModel(modelPath: path, contextSize: 512, threads: 2)
    let reply = try await PromptCacheTests.answer(
      Transcript(entries: [.prompt("Name three colours of the sky at dusk, one word each.")]), on: model,
      options: .foundationModels(GenerationOptions(sampling: .greedy, maximumResponseTokens: 24)))
    let decision = logs.records.first { $0.message.hasPrefix("flash attention") }?.message ?? "none"
    let tokens = reply.text.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " ")
    print(decisionMarker + decision.replacingOccurrences(of: "\n", with: " "))
    print(answerMarker + tokens)
  }
}
