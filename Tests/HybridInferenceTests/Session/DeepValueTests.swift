import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI

/// A `JSONValue` the app hands in nested past `JSONValue.maximumDepth` (a
/// transcript built by hand, a tool call from the app's own model, a schema)
/// ends in a typed error before anything walks it, on every backend and
/// through every entry point; one nested exactly to the bound is answered.
///
/// A recursive walk of the deep value overflows the stack, so each test runs
/// in a child process (`ChildProcess`): a crash fails the parent.
final class DeepValueTests: XCTestCase {
  /// Far past what any thread's stack holds a recursive walk of. Built once
  /// and never released: releasing a value this deep recurses in Swift's
  /// runtime (that is the app's own value, not a walk of the library's).
  static let bomb = nested(100_000)
  static let bombCopy = nested(100_000)
  static let justPast = nested(JSONValue.maximumDepth + 1)
  static let atTheBound = nested(JSONValue.maximumDepth)

  struct Answer: Generable { var text: String }

  /// `depth` containers, the outermost an object, arrays and objects alternating.
  static func nested(_ depth: Int) -> JSONValue {
    var value = JSONValue.string("x")
    for level in 0..<depth {
      value = (depth - 1 - level).isMultiple(of: 2) ? .object(["k": value]) : .array([value])
    }
    return value
  }

  /// A conversation built by hand: a call of `f` with `arguments`, its
  /// `output`, and the model's answer.
  static func transcript(arguments: JSONValue = .object([:]), output: JSONValue = .object(["output": .string("ok")]))
    -> Transcript
  {
    let call = Part(functionCall: Part.FunctionCall(id: "c1", name: "f", args: arguments))
    return Transcript(entries: [
      .prompt("call f"),
      .response(Content(role: "model", parts: [call]), modelVersion: "m"),
      .toolOutputs([Part.FunctionResponse(id: "c1", name: "f", response: output)]),
      .response(Content(role: "model", text: "done"), modelVersion: "m"),
    ])
  }

  static var hostile: [(name: String, transcript: Transcript)] {
    [
      ("deep arguments", transcript(arguments: bomb)),
      ("deep output", transcript(output: bomb)),
      ("arguments one level past the bound", transcript(arguments: justPast)),
      ("output one level past the bound", transcript(output: justPast)),
    ]
  }

  func testScriptedModel_sessionEntryPoints_areInvalidTranscript() async throws {
    try await ChildProcess.assertPasses(self) {
      let model = ScriptedModel("cloud", placement: .cloud, script: Array(repeating: .answer(["ok"]), count: 20))
      await Self.assertSessionsRefuse(model)
      XCTAssertTrue(model.requests.isEmpty, "the model was never asked")
      try await Self.assertAnswered(model)
      // Trimming after a refusal estimates what each turn weighs from its
      // JSON text: a request handed to a model directly is checked first.
      for (name, transcript) in Self.hostile {
        let refusing = ScriptedModel(
          "cloud", placement: .cloud,
          script: [.fail(HybridInferenceError.contextWindowExceeded(contextSize: 10, tokenCount: 20))])
        var request = ModelRequest(transcript: transcript, contextOverflow: .dropOldestTurns)
        request.transcript.entries.append(.prompt("p"))
        Self.assertInvalidTranscript(await captureError { try await ModelCall.respond(refusing, to: request) }, name)
      }
    }
  }

  func testGemini_everyEntryPoint_isInvalidTranscript() async throws {
    try await ChildProcess.assertPasses(self) {
      let server = try GeminiTestServer()
      defer { server.stop() }
      let model = server.model("echo")
      await Self.assertSessionsRefuse(model)
      await Self.assertModelRefuses(model)
      for (name, transcript) in Self.hostile {
        Self.assertInvalidTranscript(await captureError { try await model.countTokens(transcript) }, name)
      }
      let sent = try await server.requestCount("echo")
      XCTAssertEqual(sent, 0, "nothing reached the server")
      try await Self.assertAnswered(model)
    }
  }

  func testOpenAICompatible_everyEntryPoint_isInvalidTranscript() async throws {
    try await ChildProcess.assertPasses(self) {
      let stub = try OpenAITestServers.stub()
      defer { stub.stop() }
      let model = OpenAICompatibleModel(
        name: "echo", baseURL: stub.openAIBaseURL, apiKey: nil, requestOptions: .fastTests, logHandler: .silent)
      await Self.assertSessionsRefuse(model)
      await Self.assertModelRefuses(model)
      let sent = try await OpenAITestServers.requestCount(stub, model: "echo")
      XCTAssertEqual(sent, 0, "nothing reached the server")
      try await Self.assertAnswered(model)
    }
  }

  func testOnDevice_everyEntryPoint_isInvalidTranscript() async throws {
    try await ChildProcess.assertPasses(self) {
      let model = try LocalTestModels.tiny(contextSize: 16384)
      await Self.assertSessionsRefuse(model)
      await Self.assertModelRefuses(model)
      for (name, transcript) in Self.hostile {
        var request = ModelRequest(transcript: transcript)
        request.transcript.entries.append(.prompt("p"))
        Self.assertInvalidTranscript(await captureError { try await model.promptTokenCount(for: request) }, name)
      }
      try await Self.assertAnswered(
        model, options: .foundationModels(GenerationOptions(sampling: .greedy, maximumResponseTokens: 2)))
    }
  }

  /// The app's own model asks for a call with arguments past the bound:
  /// `invalidToolCall` before the tool (or anything else) reads them.
  func testCustomModelsDeepCall_isInvalidToolCall() async throws {
    try await ChildProcess.assertPasses(self) {
      for arguments in [Self.bomb, Self.justPast] {
        for tools in [[WeatherTool()], []] {
          let call = Part.FunctionCall(id: "c1", name: "get_weather", args: arguments)
          let model = ScriptedModel("cloud", placement: .cloud, script: [.calls([call]), .calls([call])])
          let session = GenerativeModelSession(model: model, tools: tools, logHandler: .silent)
          Self.assertInvalidToolCall(await captureError { try await session.respond(to: "p") })
          Self.assertInvalidToolCall(await captureError { for try await _ in session.streamResponse(to: "p") {} })
          XCTAssertTrue(session.transcript.entries.isEmpty, "nothing was recorded")
        }
      }
    }
  }

  /// Saving refuses a deep value with an `EncodingError` that can be
  /// printed; reading refuses deep text; a schema refuses deep nesting.
  func testCodableAndSchemas_refuseDeepValues() async throws {
    try await ChildProcess.assertPasses(self) {
      for (name, transcript) in Self.hostile {
        XCTAssertThrowsError(try JSONEncoder().encode(transcript), name) { error in
          XCTAssertTrue(error is EncodingError, name)
          XCTAssertTrue(String(describing: error).contains("512"), name)
        }
      }
      let deepText = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
      let saved = #"{"formatVersion":1,"entries":[{"role":"model","parts":[{"functionCall":{"name":"f","argsJSON":""#
      XCTAssertThrowsError(
        try JSONDecoder().decode(Transcript.self, from: Data((saved + deepText + #""}}]}]}"#).utf8)))
      XCTAssertTrue(Self.atTheBound.jsonText.hasPrefix(#"{"k":[{"k":"#))
      for value in [Self.bomb, Self.justPast] {
        XCTAssertThrowsError(
          try GenerationSchema(jsonSchema: .object(["type": .string("object"), "properties": value]))
        ) {
          guard case .unsupportedSchema? = $0 as? HybridInferenceError else { return XCTFail("\($0)") }
        }
      }
      XCTAssertThrowsError(try JSONDecoder().decode(GenerationSchema.self, from: Data(deepText.utf8)))
    }
  }

  /// Comparing and hashing an app's deep value walk it with a stack of their own.
  func testEqualityAndHashing_ofDeepValues_doNotRecurse() async throws {
    try await ChildProcess.assertPasses(self) {
      XCTAssertEqual(Self.bomb, Self.bombCopy)
      XCTAssertNotEqual(Self.bomb, Self.justPast)
      XCTAssertEqual(Self.bomb.hashValue, Self.bombCopy.hashValue)
      XCTAssertEqual(Set([Self.bomb, Self.bombCopy, Self.justPast]).count, 2)
      XCTAssertEqual(Self.transcript(arguments: Self.bomb), Self.transcript(arguments: Self.bombCopy))
      let a: JSONValue = .object(["x": .array([.number(1), .null]), "y": .string("z")])
      let b: JSONValue = .object(["y": .string("z"), "x": .array([.number(1), .null])])
      XCTAssertEqual(a, b)
      XCTAssertEqual(a.hashValue, b.hashValue)
      XCTAssertNotEqual(a, .object(["x": .array([.null, .number(1)]), "y": .string("z")]))
      XCTAssertNotEqual(JSONValue.array([.string("a")]), .array([.string("a"), .string("a")]))
    }
  }

  // MARK: Helpers

  /// A restored session's `respond` and `streamResponse`, text and structured.
  static func assertSessionsRefuse(_ model: some LanguageModel, line: UInt = #line) async {
    for (name, transcript) in hostile {
      let session = { GenerativeModelSession(model: model, transcript: transcript, logHandler: .silent) }
      assertInvalidTranscript(await captureError { try await session().respond(to: "p") }, name, line: line)
      assertInvalidTranscript(
        await captureError { for try await _ in session().streamResponse(to: "p") {} }, name, line: line)
      assertInvalidTranscript(
        await captureError { try await session().respond(to: "p", generating: Answer.self) }, name, line: line)
      assertInvalidTranscript(
        await captureError { for try await _ in session().streamResponse(to: "p", generating: Answer.self) {} },
        name, line: line)
    }
  }

  /// The model asked directly with a `ModelRequest`, as a router or an app may.
  static func assertModelRefuses(_ model: some LanguageModel, line: UInt = #line) async {
    for (name, transcript) in hostile {
      var request = ModelRequest(transcript: transcript)
      request.transcript.entries.append(.prompt("p"))
      assertInvalidTranscript(await captureError { try await model.respond(to: request) }, name, line: line)
      assertInvalidTranscript(
        await captureError { for try await _ in model.streamResponse(to: request) {} }, name, line: line)
    }
  }

  /// Values nested exactly to the bound, in a call and its output, are sent and answered.
  static func assertAnswered(
    _ model: some LanguageModel, options: HybridGenerationOptions = .default, line: UInt = #line
  ) async throws {
    let transcript = transcript(arguments: atTheBound, output: atTheBound)
    let session = GenerativeModelSession(model: model, transcript: transcript, logHandler: .silent)
    _ = try await session.respond(to: "p", options: options)
    XCTAssertEqual(session.transcript.entries.count, transcript.entries.count + 2, line: line)
  }

  static func assertInvalidTranscript(_ error: (any Error)?, _ name: String, line: UInt = #line) {
    guard case .invalidTranscript(let why)? = error as? HybridInferenceError else {
      return XCTFail("\(name): \(String(describing: error).prefix(300))", line: line)
    }
    XCTAssertTrue(why.contains("\(JSONValue.maximumDepth)"), "\(name): \(why)", line: line)
  }

  static func assertInvalidToolCall(_ error: (any Error)?, line: UInt = #line) {
    guard case .invalidToolCall(let name, let why)? = error as? HybridInferenceError else {
      return XCTFail("\(String(describing: error).prefix(300))", line: line)
    }
    XCTAssertEqual(name, "get_weather", line: line)
    XCTAssertTrue(why.contains("\(JSONValue.maximumDepth)"), why, line: line)
  }
}
