import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// What a server writes into an error reaches descriptions, logs and the
/// CLI bounded and inert (issue 20, point 8): cut to 4 KiB, with its control
/// characters escaped (`ServerText`).
final class CloudInertErrorTextTests: CloudTestCase {
  /// Whether `text` holds a character a terminal or a log would act on.
  static func hasControl(_ text: String) -> Bool {
    text.unicodeScalars.contains { ServerText.needsEscape($0) }
  }

  func testServerText_escapesControlsAndCutsOnAScalarBoundary() {
    XCTAssertEqual(ServerText.inert("plain text, été ✓"), "plain text, été ✓")
    XCTAssertEqual(
      ServerText.inert("a\u{1B}[2Jb\nc\td\r\u{7F}\u{9B}\u{2028}"),
      "a\\u{1B}[2Jb\\nc\\td\\r\\u{7F}\\u{9B}\\u{2028}")
    let long = String(repeating: "é", count: 10_000)  // 2 bytes each
    let cut = ServerText.inert(long)
    XCTAssertLessThanOrEqual(cut.utf8.count, ServerText.maximumBytes)
    XCTAssertTrue(cut.hasPrefix("éééé"))
    XCTAssertTrue(cut.hasSuffix("… (20000 bytes in all)"), String(cut.suffix(40)))
    XCTAssertEqual(ServerText.inert(cut), cut, "cutting twice changes nothing")
    let escapes = String(repeating: "\u{1B}", count: 1000)  // 1 KB that escapes to 6 KB
    XCTAssertLessThanOrEqual(ServerText.inert(escapes).utf8.count, ServerText.maximumBytes)
    XCTAssertEqual(ServerText.inert(ServerText.inert(escapes)), ServerText.inert(escapes))
  }

  func testHostileGeminiErrorEnvelope_unaryAndStreamed_isCutAndInert() async throws {
    let logs = CloudLogRecorder()
    let unary = await captureError {
      try await self.session("fault-hostile-error", logHandler: logs.handler).respond(to: "hi")
    }
    let streamed = await collectSnapshots(session("fault-hostile-error").streamResponse(to: "hi")).error
    for error in [unary, streamed] {
      let apiError = try XCTUnwrap(cloudAPIError(error))
      XCTAssertEqual(apiError.httpStatus, 400)
      XCTAssertLessThanOrEqual(apiError.message.utf8.count, ServerText.maximumBytes, "cut to 4 KiB")
      XCTAssertTrue(apiError.message.hasPrefix("\\u{1B}]52;c;aGk=\\u{7}\\u{1B}[2J\\u{9B}31mAAAA"))
      XCTAssertTrue(apiError.message.hasSuffix("bytes in all)"), "the cut says so")
      XCTAssertEqual(apiError.status, "INVALID_ARGUMENT\\u{1B}[8m")
      for text in [apiError.message, apiError.status ?? "", "\(String(describing: error))", apiError.description] {
        XCTAssertFalse(Self.hasControl(text), text.prefix(80).debugDescription)
      }
      XCTAssertLessThan("\(String(describing: error))".utf8.count, 5000)
    }
  }

  func testServerTextInOtherDescriptions_isInert() {
    // A finish reason or block reason the library does not know is shown by
    // its raw string; the server chooses it.
    let hostile = "EVIL\u{1B}]8;;http://x\u{7}" + String(repeating: "R", count: 50_000)
    let stopped = HybridInferenceError.responseStopped(
      reason: FinishReason(rawValue: hostile), response: GenerateContentResponse(modelVersion: "m"))
    let feedback = PromptFeedback(
      blockReason: PromptFeedback.BlockReason(rawValue: hostile), blockReasonMessage: "blocked\n\u{1B}[2J")
    let blocked = HybridInferenceError.promptBlocked(
      reason: feedback.blockReason, response: GenerateContentResponse(promptFeedback: feedback, modelVersion: "m"))
    let both = HybridInferenceError.bothModelsFailed(primary: stopped, secondary: blocked)
    for error in [stopped, blocked, both] {
      XCTAssertFalse(Self.hasControl(error.description), error.description.prefix(80).debugDescription)
      XCTAssertLessThanOrEqual(error.description.utf8.count, 4 * ServerText.maximumBytes)
      XCTAssertEqual(error.localizedDescription, error.description)
    }
    // An error an app builds is shown inert too.
    let built = CloudAPIError(httpStatus: 500, status: "X\u{1B}", message: "a\nb\u{9B}")
    XCTAssertEqual(built.description, "cloud API error 500 X\\u{1B}: a\\nb\\u{9B}")
  }

  func testDecodingFailureSummary_quotesNoRawKey() {
    struct Key: CodingKey {
      var stringValue: String
      var intValue: Int? { nil }
      init(stringValue: String) { self.stringValue = stringValue }
      init?(intValue: Int) { nil }
    }
    let key = Key(stringValue: "k\u{1B}[2J\n" + String(repeating: "x", count: 10_000))
    let error = DecodingError.keyNotFound(key, DecodingError.Context(codingPath: [key, key], debugDescription: ""))
    let summary = RemoteCall.summary(of: error)
    XCTAssertFalse(Self.hasControl(summary), summary.prefix(80).debugDescription)
    XCTAssertLessThan(summary.utf8.count, 1024)
    XCTAssertTrue(summary.hasPrefix("missing k\\u{1B}[2J\\n"), summary.prefix(40).debugDescription)
  }
}
