import Foundation
import HybridInference
import XCTest

/// Every recorded Gemini response in Tests/Fixtures/gemini-recorded/googleai,
/// replayed by the loopback server through the public API: `respond` for
/// unary files, `streamResponse` for streaming ones.
///
/// Successes are checked against what the file itself says, read here with
/// JSONSerialization (independently of the library's Codable types): text,
/// thoughts, finish reason, usage counts, model version. Failures are
/// checked against the table below; a new failure file without an entry
/// fails the test, so nothing is replayed unchecked.
final class CloudFixtureReplayTests: CloudTestCase {
  /// What each failure fixture must throw.
  private static let failures: [String: @Sendable (any Error) -> String?] = [
    "unary-failure-api-key": { apiStatus($0, http: 400, status: "INVALID_ARGUMENT", reason: "API_KEY_INVALID") },
    "unary-failure-generativelanguage-api-not-enabled": {
      apiStatus($0, http: 403, status: "PERMISSION_DENIED", reason: "SERVICE_DISABLED")
    },
    "unary-failure-unknown-model": { apiStatus($0, http: 404, status: "NOT_FOUND", reason: nil) },
    "streaming-failure-image-rejected": { apiStatus($0, http: 400, status: "INVALID_ARGUMENT", reason: nil) },
    "unary-failure-finish-reason-safety": { error in
      guard case .responseStopped(let reason, let response)? = error as? HybridInferenceError else {
        return "expected responseStopped, got \(error)"
      }
      if reason != .safety { return "reason \(reason)" }
      // The partial text stays available on the error.
      if response.text != "Safety error incoming in 5, 4, 3, 2..." { return "text \(response.text)" }
      return response.modelVersion == "gemini-2.0-flash" ? nil : "modelVersion \(response.modelVersion)"
    },
    "unary-failure-with-message-no-content": { error in
      guard case .responseStopped(let reason, let response)? = error as? HybridInferenceError else {
        return "expected responseStopped, got \(error)"
      }
      if reason != .other { return "reason \(reason)" }
      if response.candidates.first?.finishMessage != "Model failed to generate content due to internal error." {
        return "finishMessage \(String(describing: response.candidates.first?.finishMessage))"
      }
      // The server named no model: the client fills in its own name.
      return response.modelVersion.hasPrefix("fixture-") ? nil : "modelVersion \(response.modelVersion)"
    },
    "unary-failure-only-prompt-feedback": { error in
      guard case .promptBlocked(let reason, let response)? = error as? HybridInferenceError else {
        return "expected promptBlocked, got \(error)"
      }
      if reason != nil { return "reason \(String(describing: reason))" }
      return response.promptFeedback?.blockReasonMessage == "Message" ? nil : "feedback lost"
    },
    "streaming-failure-prompt-blocked-safety": { error in
      guard case .promptBlocked(let reason, let response)? = error as? HybridInferenceError else {
        return "expected promptBlocked, got \(error)"
      }
      if reason != .safety { return "reason \(String(describing: reason))" }
      let high = response.promptFeedback?.safetyRatings?.first { $0.probability == "HIGH" }
      return high?.category == "HARM_CATEGORY_HATE_SPEECH" ? nil : "safety ratings lost"
    },
    "streaming-failure-recitation-no-content": { error in
      guard case .responseStopped(let reason, let response)? = error as? HybridInferenceError else {
        return "expected responseStopped, got \(error)"
      }
      if reason != .recitation { return "reason \(reason)" }
      return response.text == (1...8).map { "text\($0)" }.joined() ? nil : "text \(response.text)"
    },
  ]

  private static func apiStatus(_ error: any Error, http: Int, status: String, reason: String?) -> String? {
    guard case .cloudAPI(let apiError)? = error as? HybridInferenceError else {
      return "expected cloudAPI, got \(error)"
    }
    if apiError.httpStatus != http { return "httpStatus \(apiError.httpStatus)" }
    if apiError.status != status { return "status \(String(describing: apiError.status))" }
    if apiError.reason != reason { return "reason \(String(describing: apiError.reason))" }
    return apiError.message.isEmpty ? "empty message" : nil
  }

  func testEveryFixtureReplaysThroughThePublicAPI() async throws {
    let files = try GeminiTestServer.requireFixtures()
    var replayed = 0
    for file in files {
      let stem = (file as NSString).deletingPathExtension
      let modelName = "fixture-\(file)"
      let isStreaming = file.hasPrefix("streaming-")
      let session = self.session(modelName, requestOptions: RequestOptions(retryPolicy: .none))
      if stem.contains("-failure-") {
        let check = try XCTUnwrap(Self.failures[stem], "no expectation for failure fixture \(file)")
        let error: (any Error)?
        var streamedText = ""
        if isStreaming {
          let result = await collectSnapshots(session.streamResponse(to: "Hello"))
          error = result.error
          streamedText = result.snapshots.last?.content ?? ""
        } else {
          error = await captureError { try await session.respond(to: "Hello") }
        }
        let failure = try XCTUnwrap(error, "\(file) must fail")
        if let problem = check(failure) { XCTFail("\(file): \(problem)") }
        if stem == "streaming-failure-recitation-no-content" {
          // The text before the stop reached the caller as snapshots.
          XCTAssertEqual(streamedText, (1...8).map { "text\($0)" }.joined(), file)
        }
        XCTAssertTrue(session.transcript.entries.isEmpty, "\(file): a failure must not enter the transcript")
      } else {
        let expected = try Expectation(fixture: file)
        let raw: GenerateContentResponse
        let content: String
        if isStreaming {
          let result = await collectSnapshots(session.streamResponse(to: "Hello"))
          XCTAssertNil(result.error, "\(file): \(String(describing: result.error))")
          let last = try XCTUnwrap(result.snapshots.last, "\(file) gave no snapshot")
          XCTAssertEqual(result.snapshots.count, expected.eventCount, "\(file): one snapshot per event")
          let texts = result.snapshots.map(\.content)
          XCTAssertEqual(texts, texts.sorted { $0.count < $1.count }, "\(file): snapshots only grow")
          (raw, content) = (last.rawResponse, last.content)
        } else {
          let response = try await session.respond(to: "Hello")
          (raw, content) = (response.rawResponse, response.content)
        }
        XCTAssertEqual(content, expected.text, "\(file): text")
        XCTAssertEqual(raw.thoughtText, expected.thoughtText, "\(file): thoughts")
        XCTAssertEqual(raw.finishReason?.rawValue, expected.finishReason, "\(file): finishReason")
        XCTAssertEqual(raw.modelVersion, expected.modelVersion ?? modelName, "\(file): modelVersion")
        XCTAssertEqual(usageCounts(raw.usageMetadata), expected.usage, "\(file): usage")
        XCTAssertEqual(session.transcript.entries.count, 2, "\(file): the turn is recorded")
        XCTAssertEqual(session.transcript.entries.last?.modelVersion, raw.modelVersion, file)
      }
      replayed += 1
    }
    XCTAssertEqual(replayed, files.count)
    XCTAssertGreaterThanOrEqual(replayed, 36, "every file of googleai/ is replayed")
  }

  /// Unary fixtures through the stream endpoint (as one event) answer the same.
  func testUnaryFixturesAlsoStreamAsOneEvent() async throws {
    _ = try GeminiTestServer.requireFixtures()
    let file = "unary-success-thinking-function-call-thought-summary-signature.json"
    let expected = try Expectation(fixture: file)
    let session = self.session("fixture-\(file)")
    let result = await collectSnapshots(session.streamResponse(to: "Hello"))
    XCTAssertNil(result.error)
    let raw = try XCTUnwrap(result.snapshots.last?.rawResponse)
    XCTAssertEqual(raw.text, expected.text)
    XCTAssertEqual(raw.thoughtText, expected.thoughtText)
    let signature = raw.candidates.first?.content?.parts.compactMap(\.thoughtSignature).first
    let url = GeminiTestServer.fixturesDirectory.appendingPathComponent("googleai/\(file)")
    let recorded = try String(contentsOf: url, encoding: .utf8)
    XCTAssertGreaterThan(signature?.count ?? 0, 100)
    XCTAssertTrue(recorded.contains("\"\(signature ?? "-")\""), "the thought signature is kept whole")
    XCTAssertNotNil(raw.candidates.first?.content?.parts.compactMap(\.functionCall).first)
  }

  private func usageCounts(_ usage: UsageMetadata?) -> [String: Int] {
    guard let usage else { return [:] }
    var counts: [String: Int] = [:]
    counts["promptTokenCount"] = usage.promptTokenCount
    counts["candidatesTokenCount"] = usage.candidatesTokenCount
    counts["totalTokenCount"] = usage.totalTokenCount
    counts["thoughtsTokenCount"] = usage.thoughtsTokenCount
    counts["toolUsePromptTokenCount"] = usage.toolUsePromptTokenCount
    counts["cachedContentTokenCount"] = usage.cachedContentTokenCount
    return counts
  }
}

/// What a success fixture says, read with JSONSerialization.
private struct Expectation {
  var text = ""
  var thoughtText = ""
  var finishReason: String?
  var modelVersion: String?
  var usage: [String: Int] = [:]
  var eventCount = 0

  init(fixture file: String) throws {
    let url = GeminiTestServer.fixturesDirectory.appendingPathComponent("googleai/\(file)")
    let raw = try String(contentsOf: url, encoding: .utf8)
    let documents: [String]
    if file.hasPrefix("streaming-") {
      documents = raw.replacingOccurrences(of: "\r\n", with: "\n").components(separatedBy: "\n\n")
        .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        .filter { !$0.isEmpty }
        .map { $0.hasPrefix("data: ") ? String($0.dropFirst(6)) : $0 }
    } else {
      documents = [raw]
    }
    for document in documents {
      let object = try XCTUnwrap(
        try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any])
      eventCount += 1
      if let version = object["modelVersion"] as? String { modelVersion = version }
      if let usage = object["usageMetadata"] as? [String: Any] {
        self.usage = usage.compactMapValues { $0 as? Int }
      }
      let candidate = (object["candidates"] as? [[String: Any]])?.first
      if let reason = candidate?["finishReason"] as? String { finishReason = reason }
      let content = candidate?["content"] as? [String: Any]
      for part in content?["parts"] as? [[String: Any]] ?? [] {
        guard let text = part["text"] as? String else { continue }
        if part["thought"] as? Bool == true { thoughtText += text } else { self.text += text }
      }
    }
  }
}
