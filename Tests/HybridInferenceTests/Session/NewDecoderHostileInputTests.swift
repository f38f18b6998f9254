import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceOpenAI

/// The nastiest inputs for what this stop's decoders read from others (a
/// stored transcript, a server's Retry-After, grounding metadata), each in a
/// child process so that a crash fails the parent instead of killing it.
final class NewDecoderHostileInputTests: XCTestCase {
  func testHostileTranscripts_areDecodingErrorsNotCrashes() async throws {
    try await ChildProcess.assertPasses(self) {
      let deep = String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000)
      let long = String(repeating: "x", count: 4 << 20)
      let hostile = [
        #"{"formatVersion":\#(deep),"entries":[]}"#,
        #"{"formatVersion":1,"entries":\#(deep)}"#,
        #"{"formatVersion":-9223372036854775808,"entries":[]}"#,
        #"{"formatVersion":1e400,"entries":[]}"#,
        #"{"formatVersion":18446744073709551616,"entries":[]}"#,
        #"{"formatVersion":1,"entries":[{"role":"\#(long)","parts":[]}]}"#,
        #"{"formatVersion":1,"entries":[{"role":"user","parts":[{"functionResponse":{"name":"f","responseJSON":"\#(deep)"}}]}]}"#,
        #"{"formatVersion":1,"entries":[{"role":"model","parts":[{"functionCall":{"name":"f","argsJSON":"-9223372036854775809e999999999"}}]}]}"#,
        #"{"formatVersion":1,"entries":[{"role":"user","parts":[{"inlineData":{"mimeType":"image/png","data":"!!!"}}]}]}"#,
      ]
      for text in hostile {
        XCTAssertThrowsError(try JSONDecoder().decode(Transcript.self, from: Data(text.utf8)), String(text.prefix(80)))
      }
    }
  }

  func testHostileRetryAfterValues_areNoWaitOrABoundedOne() async throws {
    try await ChildProcess.assertPasses(self) {
      let now = Date()
      for value in ["-1", "nan", "", "-1e308", "soon"] {
        XCTAssertNil(OpenAIErrorMapping.retryAfter(value, now: now), value.prefix(40).description)
      }
      for value in ["99999999999999999999", "inf", "1e308", String(repeating: "9", count: 100_000)] {
        XCTAssertEqual(
          OpenAIErrorMapping.retryAfter(value, now: now), WaitLimits.longestWait, value.prefix(40).description)
      }
      XCTAssertEqual(OpenAIErrorMapping.retryAfter("0.0001", now: now), .milliseconds(1))
      XCTAssertEqual(
        OpenAIErrorMapping.retryAfter("Fri, 31 Dec 9999 23:59:59 GMT", now: now), WaitLimits.longestWait,
        "past a year is a year")
    }
  }

  func testHostileGroundingMetadata_decodesLenientlyWithoutCrashing() async throws {
    try await ChildProcess.assertPasses(self) {
      let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
      let candidates = [
        #"{"groundingMetadata":{"groundingSupports":[{"segment":{"startIndex":-9223372036854775808,"endIndex":1e400}}]}}"#,
        #"{"groundingMetadata":{"groundingChunks":\#(deep)}}"#,
        #"{"urlContextMetadata":{"urlMetadata":[{"retrievedUrl":12,"urlRetrievalStatus":{"x":1}}]}}"#,
      ]
      for text in candidates {
        // Decoding may refuse or keep what it can; it must return.
        _ = try? JSONDecoder().decode(Candidate.self, from: Data(text.utf8))
      }
    }
  }
}
