import Foundation
import HybridInference
import XCTest

/// The API key never shows: not in the model's descriptions or mirror, not
/// in any error the client throws, not in a log line, not in a URL.
final class CloudSecretTests: CloudTestCase {
  private let key = GeminiTestServer.apiKey

  private func assertNoKey(
    in value: Any, _ label: String, file: StaticString = #filePath, line: UInt = #line
  ) {
    var dumped = ""
    dump(value, to: &dumped)
    var renderings = [
      String(describing: value), String(reflecting: value), "\(value)", dumped,
    ]
    if let error = value as? any Error {
      renderings.append(error.localizedDescription)
      renderings.append((error as NSError).description)
    }
    if let debug = value as? any CustomDebugStringConvertible { renderings.append(debug.debugDescription) }
    for (index, text) in renderings.enumerated() {
      XCTAssertFalse(text.contains(key), "\(label): rendering \(index) shows the key: \(text)", file: file, line: line)
      XCTAssertFalse(
        text.contains("SECRET"), "\(label): rendering \(index) shows part of the key", file: file, line: line)
    }
  }

  func testModelDescriptions_neverShowTheKey() throws {
    let model = server.model("echo")
    assertNoKey(in: model, "model")
    XCTAssertTrue(model.description.contains("API key set"))
    XCTAssertTrue(String(reflecting: model).contains("<redacted>"))
    let mirror = Mirror(reflecting: model)
    XCTAssertEqual(mirror.children.first { $0.label == "apiKey" }?.value as? String, "<redacted>")
    let hybrid = HybridModel(primary: model, secondary: ScriptedModel("local", placement: .onDevice))
    assertNoKey(in: hybrid, "hybrid")
    assertNoKey(in: GenerativeModelSession(model: model, logHandler: .silent), "session")

    let proxied = CloudGeminiModel(
      name: "echo", apiKey: key,
      baseURL: try XCTUnwrap(URL(string: "https://user:proxySECRET@proxy.example/gemini?token=SECRET")),
      logHandler: .silent)
    assertNoKey(in: proxied, "model behind a proxy with credentials")
    XCTAssertTrue(proxied.description.contains("https://proxy.example/gemini"), proxied.description)
  }

  func testEveryErrorTheClientThrows_andEveryLogLine_omitTheKey() async throws {
    let logs = CloudLogRecorder()
    let faults = [
      "fault-echo-key", "fault-400", "fault-429~times-9~retry-0.01s", "fault-429-per-day",
      "fault-500~times-9", "fault-html-502", "fault-malformed", "fault-empty", "fault-truncated",
      "fault-stream-error", "fault-reset-mid", "fault-reset-before~times-9", "no-such-model",
      "fixture-unary-failure-api-key.json", "fixture-unary-failure-finish-reason-safety.json",
      "fixture-unary-failure-only-prompt-feedback.json",
      "fixture-streaming-failure-prompt-blocked-safety.txt",
    ]
    var errors: [(String, any Error)] = []
    for fault in faults {
      let session = self.session(fault, logHandler: logs.handler)
      if let error = await captureError({ try await session.respond(to: "hi") }) {
        errors.append((fault, error))
      }
      if let error = await collectSnapshots(session.streamResponse(to: "hi")).error {
        errors.append((fault + " (stream)", error))
      }
    }
    let slow = self.session(
      "fault-slow-body~delay-3000", requestOptions: RequestOptions(timeout: .milliseconds(300)))
    if let error = await captureError({ try await slow.respond(to: "hi") }) { errors.append(("slow", error)) }
    let offline = CloudGeminiModel(
      name: "echo", apiKey: key, baseURL: try XCTUnwrap(URL(string: "https://nonexistent.invalid")),
      requestOptions: .fastTests, logHandler: logs.handler)
    let local = ScriptedModel(
      "local", placement: .onDevice, script: [.fail(HybridInferenceError.generationFailed("x"))])
    let hybrid = GenerativeModelSession(
      model: .hybridModel(primary: offline, secondary: local), logHandler: logs.handler)
    if let error = await captureError({ try await hybrid.respond(to: "hi") }) {
      errors.append(("both failed", error))
    }
    XCTAssertGreaterThanOrEqual(errors.count, 30)
    for (label, error) in errors { assertNoKey(in: error, label) }

    // The server quoted the key in its message; the client redacted it.
    let echoed = try XCTUnwrap(errors.first { $0.0 == "fault-echo-key" })
    XCTAssertTrue(cloudAPIError(echoed.1)?.message.contains("<redacted>") ?? false)

    let records = logs.records
    XCTAssertFalse(records.isEmpty, "retries and the fallback were logged")
    for record in records {
      XCTAssertFalse(record.message.contains(key), "log line shows the key: \(record.message)")
      if let fallback = record.fallback { assertNoKey(in: fallback, "fallback event") }
    }
  }

  func testTheKeyTravelsOnlyInTheHeader() async throws {
    let name = "echo~\(uniqueID())"
    _ = try await session(name).respond(to: "hi")
    let request = try await server.lastRequest(name)
    XCTAssertEqual(request["keyHeaderPresent"] as? Bool, true)
    for field in ["path", "query"] {
      XCTAssertFalse((request[field] as? String ?? "").contains(key), field)
    }
  }
}
