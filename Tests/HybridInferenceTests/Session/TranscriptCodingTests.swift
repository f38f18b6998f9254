import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// The transcript's JSON format: every part kind round trips with the
/// default coders, and what no session could have written does not decode.
final class TranscriptCodingTests: XCTestCase {
  /// A transcript with every part kind, every optional field and the
  /// numbers a coder's own number model would lose.
  static let everything = Transcript(
    instructions: "Answer in one sentence.",
    entries: [
      .prompt("Weather in Paris?"),
      Transcript.Entry(
        role: .user,
        content: Content(parts: [
          Part(inlineData: Part.Blob(mimeType: "image/png", data: Data([0, 1, 2, 250, 255]))),
          Part(fileData: Part.FileData(mimeType: "application/pdf", fileUri: "https://example.com/f/abc")),
          Part(fileData: Part.FileData(fileUri: "gs://bucket/x")),
        ])),
      .response(
        Content(parts: [
          Part(text: "Let me think.", thought: true, thoughtSignature: "c2lnLTE="),
          Part(text: "Checking."),
          Part(
            functionCall: Part.FunctionCall(
              id: "c1", name: "getWeather",
              args: .object([
                "city": .string("Paris \u{1F5FC} \"quoted\"\n"),
                "big": .exactInteger(JSONValue.ExactInteger("123456789012345678901234567890")!),
                "int64": .exactInteger(JSONValue.ExactInteger(Int64.min)),
                "twoTo60AsDouble": .number(1_152_921_504_606_846_976),
                "fraction": .number(0.1),
                "tiny": .number(.leastNonzeroMagnitude),
                "huge": .number(1.7976931348623157e308),
                "negativeZero": .number(-0.0),
                "list": .array([.null, .bool(true), .bool(false), .number(3), .object([:])]),
              ])),
            thoughtSignature: "c2lnLTI="),
          Part(functionCall: Part.FunctionCall(name: "now")),
          Part(executableCode: Part.ExecutableCode(language: "PYTHON", code: "print(1)")),
          Part(codeExecutionResult: Part.CodeExecutionResult(outcome: "OUTCOME_OK", output: "1\n")),
          Part(executableCode: Part.ExecutableCode(code: "x")),
          Part(codeExecutionResult: Part.CodeExecutionResult()),
          Part(text: "", thoughtSignature: "c2lnLTM="),
          Part(),
        ]),
        modelVersion: "gemini-3.1-flash-lite",
        producer: "https://generativelanguage.googleapis.com/v1beta/models/gemini-3.1-flash-lite"),
      .toolOutputs([
        .output("18°C", name: "getWeather", id: "c1"),
        Part.FunctionResponse(name: "now", response: .object(["error": .string("no clock"), "n": .number(-7.25)])),
      ]),
      .response(Content(text: "It is 18°C."), modelVersion: LocalSystemModel.modelVersion),
      .prompt("Thanks"),
      .response(Content(parts: []), modelVersion: "m"),
    ])

  func testEveryPartKind_roundTripsLosslesslyWithTheDefaultCoders() throws {
    let data = try JSONEncoder().encode(Self.everything)
    let decoded = try JSONDecoder().decode(Transcript.self, from: data)
    XCTAssertEqual(decoded, Self.everything)
    // Field by field, so a failure says which.
    for (got, want) in zip(decoded.entries, Self.everything.entries) {
      XCTAssertEqual(got.content.parts, want.content.parts)
      XCTAssertEqual(got.producer, want.producer)
    }
    // And again: the encoding of the decoded value is the same document.
    let object = try JSONSerialization.jsonObject(with: data) as? NSDictionary
    let again = try JSONSerialization.jsonObject(with: JSONEncoder().encode(decoded)) as? NSDictionary
    XCTAssertEqual(object, again)
  }

  func testFormat_isTheDocumentedShape() throws {
    let data = try JSONEncoder().encode(Self.everything)
    let object = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    XCTAssertEqual(object["formatVersion"] as? Int, 1)
    XCTAssertEqual(object["instructions"] as? String, "Answer in one sentence.")
    let entries = try XCTUnwrap(object["entries"] as? [[String: Any]])
    XCTAssertEqual(Set(entries[0].keys), ["role", "parts"], "absent optional fields are left out")
    XCTAssertEqual(Set(entries[2].keys), ["role", "parts", "modelVersion", "producer"])
    let blob = try XCTUnwrap((entries[1]["parts"] as? [[String: Any]])?.first?["inlineData"] as? [String: Any])
    XCTAssertEqual(blob["data"] as? String, Data([0, 1, 2, 250, 255]).base64EncodedString())
    let call = try XCTUnwrap((entries[2]["parts"] as? [[String: Any]])?[2]["functionCall"] as? [String: Any])
    let args = try XCTUnwrap(call["argsJSON"] as? String)
    XCTAssertTrue(args.contains(#""big":123456789012345678901234567890"#), args)
    XCTAssertEqual(Transcript.formatVersion, 1)
  }

  func testTheReadmeExample_decodes() throws {
    let json = #"""
      {
        "formatVersion": 1,
        "instructions": "Answer in one sentence.",
        "entries": [
          {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
          {"role": "model", "modelVersion": "gemini-3.1-flash-lite",
           "producer": "https://generativelanguage.googleapis.com/v1beta/models/gemini-3.1-flash-lite",
           "parts": [{"functionCall": {"id": "c1", "name": "getWeather", "argsJSON": "{\"city\":\"Paris\"}"},
                      "thoughtSignature": "CiQB"}]},
          {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "getWeather",
                                                           "responseJSON": "{\"output\":\"18°C\"}"}}]},
          {"role": "model", "modelVersion": "gemini-3.1-flash-lite", "parts": [{"text": "18°C and sunny."}]}
        ]
      }
      """#
    let transcript = try JSONDecoder().decode(Transcript.self, from: Data(json.utf8))
    XCTAssertEqual(transcript.entries.count, 4)
    XCTAssertEqual(transcript.entries[1].toolCalls.first?.args, .object(["city": .string("Paris")]))
    XCTAssertEqual(transcript.entries[1].content.role, "model")
    XCTAssertEqual(transcript.entries[2].toolOutputs.first?.outputText, "18°C")
    XCTAssertEqual(transcript.entries[3].text, "18°C and sunny.")
  }

  // MARK: What no session could have written

  private func decodingError(_ json: String, file: StaticString = #filePath, line: UInt = #line) -> String {
    do {
      let transcript = try JSONDecoder().decode(Transcript.self, from: Data(json.utf8))
      XCTFail("decoded \(transcript)", file: file, line: line)
      return ""
    } catch DecodingError.dataCorrupted(let context) {
      return context.debugDescription
    } catch {
      XCTFail("expected dataCorrupted, got \(error)", file: file, line: line)
      return ""
    }
  }

  func testAnOutputWithNoCall_isADecodingError() {
    let message = decodingError(
      #"""
      {"formatVersion": 1, "entries": [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"text": "hello"}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "getWeather", "responseJSON": "{}"}}]}
      ]}
      """#)
    XCTAssertTrue(message.contains("entry 2"), message)
    XCTAssertTrue(message.contains("no call of it"), message)
    // An id that matches no call is the same thing.
    let byID = decodingError(
      #"""
      {"formatVersion": 1, "entries": [
        {"role": "model", "parts": [{"functionCall": {"id": "a", "name": "f"}}]},
        {"role": "user", "parts": [{"functionResponse": {"id": "b", "name": "f", "responseJSON": "{}"}}]}
      ]}
      """#)
    XCTAssertTrue(byID.contains("id b"), byID)
  }

  func testManyCallsAndOutputsInOneTurn_areMatchedByIDInAnyOrder() throws {
    let count = 50_000
    let calls = (0..<count).map { Part(functionCall: .init(id: "c\($0)", name: "f")) }
    let outputs = (0..<count).map { Part.FunctionResponse.output("x", name: "f", id: "c\(count - 1 - $0)") }
    var transcript = Transcript(entries: [
      .prompt("go"), .response(Content(parts: calls), modelVersion: "m"), .toolOutputs(outputs),
    ])
    XCTAssertNil(transcript.firstProblem())
    transcript.entries[2].content.parts.append(Part(functionResponse: .output("x", name: "f", id: "missing")))
    XCTAssertEqual(transcript.firstProblem()?.entry, 2)
  }

  func testAnUnknownRole_isADecodingError() {
    let message = decodingError(#"{"formatVersion": 1, "entries": [{"role": "system", "parts": []}]}"#)
    XCTAssertTrue(message.contains("unknown role \"system\""), message)
  }

  func testAnUnknownPartKind_isADecodingError() {
    let message = decodingError(
      #"{"formatVersion": 1, "entries": [{"role": "user", "parts": [{"videoMetadata": {}}]}]}"#)
    XCTAssertTrue(message.contains("unknown part field \"videoMetadata\""), message)
  }

  func testALaterFormatVersion_isADecodingError() {
    let message = decodingError(#"{"formatVersion": 2, "entries": []}"#)
    XCTAssertTrue(message.contains("format version 2"), message)
    XCTAssertTrue(message.contains("later version"), message)
    XCTAssertTrue(decodingError(#"{"formatVersion": 0, "entries": []}"#).contains("not a version"))
  }

  func testAMissingFormatVersion_isADecodingError() {
    XCTAssertThrowsError(try JSONDecoder().decode(Transcript.self, from: Data(#"{"entries": []}"#.utf8))) {
      guard case DecodingError.keyNotFound(let key, _) = $0 else { return XCTFail("\($0)") }
      XCTAssertEqual(key.stringValue, "formatVersion")
    }
  }

  func testCallsAndOutputsOnTheWrongSide_areDecodingErrors() {
    XCTAssertTrue(
      decodingError(
        #"{"formatVersion": 1, "entries": [{"role": "user", "parts": [{"functionCall": {"name": "f"}}]}]}"#
      ).contains("only the model calls tools"))
    XCTAssertTrue(
      decodingError(
        #"""
        {"formatVersion": 1, "entries": [
          {"role": "model", "parts": [{"functionResponse": {"name": "f", "responseJSON": "{}"}}]}]}
        """#
      ).contains("outputs are the app's"))
  }

  func testToolValuesThatAreNotJSON_orNestTooDeep_areDecodingErrors() {
    XCTAssertTrue(
      decodingError(
        #"""
        {"formatVersion": 1, "entries": [
          {"role": "model", "parts": [{"functionCall": {"name": "f", "argsJSON": "{\"a\": "}}]}]}
        """#
      ).contains("argsJSON is not JSON"))
    let deep = String(repeating: "[", count: 100_000)
    XCTAssertTrue(
      decodingError(
        #"{"formatVersion": 1, "entries": [{"role": "model", "parts": [{"functionCall": {"name": "f", "argsJSON": ""#
          + deep + #""}}]}]}"#
      ).contains("deeper than"))
    let badBase64 =
      #"{"formatVersion": 1, "entries": [{"role": "user", "parts": [{"inlineData": {"mimeType": "a", "data": "%%"}}]}]}"#
    XCTAssertThrowsError(try JSONDecoder().decode(Transcript.self, from: Data(badBase64.utf8))) {
      XCTAssertTrue($0 is DecodingError, "\($0)")
    }
  }

  func testValuesJSONCannotHold_areEncodingErrorsNotCrashes() {
    func encoding(_ value: JSONValue) -> Error? {
      let transcript = Transcript(entries: [
        .prompt("x"), .response(Content(parts: [Part(functionCall: .init(name: "f", args: value))]), modelVersion: "m"),
      ])
      do {
        _ = try JSONEncoder().encode(transcript)
        return nil
      } catch {
        return error
      }
    }
    XCTAssertTrue(encoding(.object(["x": .number(.nan)])) is EncodingError)
    XCTAssertTrue(encoding(.array([.number(.infinity)])) is EncodingError)
    var deep = JSONValue.null
    // Past the reader's 512 levels (far deeper values cannot even be freed by Swift without recursion).
    for _ in 0..<600 { deep = .array([deep]) }
    XCTAssertTrue(encoding(deep) is EncodingError)
  }

  // MARK: Built by hand

  func testAnInvalidTranscriptBuiltInCode_failsTheFirstRequestWithInvalidTranscript() async throws {
    let model = ScriptedModel("m", placement: .cloud)
    let transcript = Transcript(entries: [
      .prompt("hi"),
      .response(Content(text: "hello"), modelVersion: "m"),
      .toolOutputs([.output("18", name: "getWeather", id: nil)]),
    ])
    let session = GenerativeModelSession(model: model, transcript: transcript, logHandler: .silent)
    do {
      _ = try await session.respond(to: "again")
      XCTFail("answered")
    } catch HybridInferenceError.invalidTranscript(let why) {
      XCTAssertTrue(why.contains("entry 2"), why)
    }
    XCTAssertTrue(model.requests.isEmpty, "nothing was sent")
    XCTAssertFalse(session.isResponding, "the slot is free again")
    // The stream says the same.
    var iterator = session.streamResponse(to: "again").makeAsyncIterator()
    do {
      _ = try await iterator.next()
      XCTFail("streamed")
    } catch HybridInferenceError.invalidTranscript {}
    XCTAssertEqual(
      HybridInferenceError.invalidTranscript("entry 2 is wrong").description, "invalid transcript: entry 2 is wrong")
  }

  func testContentRole_alwaysFollowsTheEntryRole() {
    var entry = Transcript.Entry(role: .user, content: Content(role: "model", text: "x"))
    XCTAssertEqual(entry.content.role, "user")
    entry.role = .model
    XCTAssertEqual(entry.content.role, "model")
    entry.content = Content(text: "y")
    XCTAssertEqual(entry.content.role, "model")
  }
}
