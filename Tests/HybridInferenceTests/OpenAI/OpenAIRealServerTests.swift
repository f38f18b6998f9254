import Foundation
import OpenAIServers
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// `OpenAICompatibleModel` against a real llama-server (llama.cpp's own,
/// built by the set-up) running the tiny random-weight model: what it
/// answers is noise, so the tests check the protocol and the routing, not
/// the words.
final class OpenAIRealServerTests: XCTestCase {
  private var server: LlamaServerProcess?

  override func tearDown() async throws {
    server?.stop()
    server = nil
  }

  private func fleet(parallel: Int = 1) async throws -> OpenAICompatibleModel {
    let server = try await OpenAITestServers.llamaServer(parallel: parallel)
    self.server = server
    return OpenAICompatibleModel(
      name: "fleet-model", baseURL: server.baseURL, apiKey: nil, requestOptions: .fastTests,
      logHandler: .silent)
  }

  private static let short = HybridGenerationOptions.gemini(
    GenerationConfig(temperature: 0, maxOutputTokens: 8, seed: 1))

  func testUnaryAnswer_namesTheServersModelAndCountsTokens() async throws {
    let fleet = try await fleet()
    let ids = try await fleet.prepare()
    XCTAssertTrue(ids.contains("fleet-model"), "GET /models lists the alias: \(ids)")
    let session = GenerativeModelSession(model: fleet, logHandler: .silent)
    let response = try await session.respond(to: "Hello there", options: Self.short)
    XCTAssertEqual(response.rawResponse.modelVersion, "fleet-model")
    let finish = try XCTUnwrap(response.rawResponse.finishReason)
    XCTAssertTrue([.stop, .maxTokens].contains(finish), "\(finish)")
    let usage = try XCTUnwrap(response.rawResponse.usageMetadata)
    XCTAssertGreaterThan(usage.promptTokenCount ?? 0, 0)
    XCTAssertLessThanOrEqual(usage.candidatesTokenCount ?? 99, 8, "max_tokens was sent")
    XCTAssertNotNil(response.rawResponse.responseId)
  }

  func testStreamedAnswer_arrivesInSeveralDeltasWithUsage() async throws {
    let fleet = try await fleet()
    var deltas: [GenerateContentResponse] = []
    for try await delta in fleet.streamResponse(
      to: ModelRequest(transcript: Transcript(entries: [.prompt("Count to ten")]), options: Self.short))
    {
      deltas.append(delta)
    }
    var accumulator = ResponseAccumulator()
    deltas.forEach { accumulator.add($0) }
    let answer = try XCTUnwrap(accumulator.response)
    XCTAssertEqual(answer.modelVersion, "fleet-model")
    XCTAssertNotNil(answer.finishReason)
    XCTAssertNotNil(answer.usageMetadata?.totalTokenCount, "stream_options.include_usage")
    if (answer.usageMetadata?.candidatesTokenCount ?? 0) > 2, !answer.text.isEmpty {
      XCTAssertGreaterThan(deltas.count, 2, "token by token, not one piece")
    }
  }

  func testMultiTurnConversation_sendsEveryTurn() async throws {
    let fleet = try await fleet()
    let session = GenerativeModelSession(model: fleet, instructions: "Be brief.", logHandler: .silent)
    let first = try await session.respond(to: "My name is Ada.", options: Self.short)
    let second = try await session.respond(to: "What is my name?", options: Self.short)
    XCTAssertEqual(session.transcript.entries.count, 4)
    XCTAssertEqual(session.transcript.entries.map(\.role), [.user, .model, .user, .model])
    XCTAssertEqual(second.rawResponse.modelVersion, "fleet-model")
    // The second prompt carries the first turn (and the instructions): more prompt tokens.
    XCTAssertGreaterThan(
      second.rawResponse.usageMetadata?.promptTokenCount ?? 0,
      first.rawResponse.usageMetadata?.promptTokenCount ?? .max)
  }

  func testPreferOnDeviceWithTheDeviceDisabled_isAnsweredByTheServer() async throws {
    let fleet = try await fleet()
    let local = LocalSystemModel(modelPath: LocalTestModels.tinyPath, isEnabled: false)
    let session = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: fleet), logHandler: .silent)
    let response = try await session.respond(to: "Hello", options: Self.short)
    XCTAssertEqual(response.rawResponse.modelVersion, "fleet-model")
  }

  func testServerPortClosed_fallsBackToTheDevice() async throws {
    let port = try closedLoopbackPort()
    let closed = OpenAICompatibleModel(
      name: "fleet-model", baseURL: try XCTUnwrap(URL(string: "http://127.0.0.1:\(port)/v1")),
      apiKey: nil, requestOptions: RequestOptions(remembersOffline: false), logHandler: .silent)
    let local = try LocalTestModels.tiny()
    let session = GenerativeModelSession(
      model: .hybridModel(primary: closed, secondary: local), logHandler: .silent)
    let options = HybridGenerationOptions.hybrid(
      gemini: GenerationConfig(maxOutputTokens: 8), foundationModels: GenerationOptions(maximumResponseTokens: 8))
    let response = try await session.respond(to: "Hello", options: options)
    XCTAssertEqual(response.rawResponse.modelVersion, LocalSystemModel.modelVersion)
    let error = await captureError {
      try await closed.respond(to: ModelRequest(transcript: Transcript(entries: [.prompt("x")])))
    }
    XCTAssertNotNil(offlineError(error), "a refused connection is offline")
  }

  func testFourConcurrentSessionsThroughOneServer_areAllAnswered() async throws {
    let fleet = try await fleet(parallel: 4)
    let answers = try await withThrowingTaskGroup(of: String.self) { group in
      for index in 0..<4 {
        group.addTask {
          let session = GenerativeModelSession(model: fleet, logHandler: .silent)
          var last = ""
          for try await snapshot in session.streamResponse(to: "Question \(index)", options: Self.short) {
            last = snapshot.rawResponse.modelVersion
          }
          return last
        }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    XCTAssertEqual(answers, Array(repeating: "fleet-model", count: 4))
  }

  func testResponseSchema_isEnforcedByTheServer() async throws {
    let fleet = try await fleet()
    let session = GenerativeModelSession(model: fleet, logHandler: .silent)
    let schema = try GenerationSchema(
      jsonSchema: #"{"type":"object","properties":{"colour":{"enum":["red","green","blue"]}},"required":["colour"]}"#)
    // The tiny model's noise, constrained by llama-server's grammar, is still the schema's JSON.
    let answer = try await session.respond(
      to: "Pick a colour", schema: schema, options: .gemini(GenerationConfig(temperature: 0, maxOutputTokens: 32)))
    guard case .object(let object) = answer.content, case .string(let colour)? = object["colour"] else {
      return XCTFail("\(answer.content)")
    }
    XCTAssertTrue(["red", "green", "blue"].contains(colour), colour)
  }
}
