import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// On the loopback Gemini server: responses say `.cloud` and name their
/// producer, and thought signatures go back only to the model that made them,
/// after a restore onto another model and after a fallback between two.
final class CloudPlacementAndSignatureTests: CloudTestCase {
  private static let fixture = "unary-success-thinking-function-call-thought-summary-signature.json"

  /// A first turn answered from the fixture, which carries a signature.
  private func signedTranscript() async throws -> (Transcript, CloudGeminiModel) {
    XCTAssertTrue(try GeminiTestServer.requireFixtures().contains(Self.fixture))
    let model = server.model("fixture-\(Self.fixture)")
    let session = GenerativeModelSession(model: model, logHandler: .silent)
    let first = try await session.respond(to: "How many days until New Year's Eve?")
    XCTAssertEqual(first.rawResponse.placement, .cloud)
    XCTAssertEqual(first.rawResponse.producer, "\(server.baseURL.absoluteString)/v1beta/models/fixture-\(Self.fixture)")
    let entry = try XCTUnwrap(session.transcript.entries.last)
    XCTAssertEqual(entry.producer, first.rawResponse.producer)
    XCTAssertFalse(entry.content.parts.compactMap(\.thoughtSignature).isEmpty)
    // Through the JSON format, as another process would get it.
    return (try JSONDecoder().decode(Transcript.self, from: JSONEncoder().encode(session.transcript)), model)
  }

  private func sentSignatures(_ model: String) async throws -> [String] {
    let last = try await server.lastRequest(model)
    let body = try XCTUnwrap(last["body"] as? [String: Any])
    let contents = try XCTUnwrap(body["contents"] as? [[String: Any]])
    return contents.flatMap { ($0["parts"] as? [[String: Any]] ?? []).compactMap { $0["thoughtSignature"] as? String } }
  }

  func testRestoredOntoAnotherModel_signaturesAreLeftOut_ontoTheSameOne_kept() async throws {
    let (saved, original) = try await signedTranscript()
    let other = "echo~\(uniqueID())"
    _ = try await GenerativeModelSession(model: server.model(other), transcript: saved, logHandler: .silent)
      .respond(to: "Thanks")
    let sentToOther = try await sentSignatures(other)
    XCTAssertEqual(sentToOther, [], "a foreign signature would be a 400")
    let last = try await server.lastRequest(other)
    let body = try XCTUnwrap(last["body"] as? [String: Any])
    XCTAssertEqual((body["contents"] as? [[String: Any]])?.count, 3, "the turns themselves all went")

    _ = try await GenerativeModelSession(model: original, transcript: saved, logHandler: .silent)
      .respond(to: "Thanks")
    let sentToOriginal = try await sentSignatures(original.name)
    XCTAssertEqual(sentToOriginal, saved.entries[1].content.parts.compactMap(\.thoughtSignature))
  }

  func testAfterAFallbackBetweenTwoGeminiModels_theSecondGetsNoForeignSignature() async throws {
    let (saved, original) = try await signedTranscript()
    let primary = SwitchableModel(original)
    let other = "echo~\(uniqueID())"
    let session = GenerativeModelSession(
      model: .hybridModel(primary: primary, secondary: server.model(other)), transcript: saved, logHandler: .silent)
    primary.isOffline = true
    let answer = try await session.respond(to: "Thanks")
    XCTAssertEqual(answer.rawResponse.producer, "\(server.baseURL.absoluteString)/v1beta/models/\(other)")
    let sent = try await sentSignatures(other)
    XCTAssertEqual(sent, [])
  }

  func testAPreferOnDeviceHybridFallingBack_sendsTheCloudNoDeviceThought() async throws {
    let secret = "device-only reasoning 7f3a"
    let device = ScriptedModel(
      "device", placement: .onDevice,
      script: [
        .thoughtThenAnswer(secret, .zero, ["1001 is not prime."]),
        .fail(HybridInferenceError.generationFailed("the device gave up")),
      ])
    let cloud = "echo~\(uniqueID())"
    let session = GenerativeModelSession(
      model: .hybridModel(primary: device, secondary: server.model(cloud)), logHandler: .silent)
    let first = try await session.respond(to: "Is 1001 prime?")
    XCTAssertEqual(first.rawResponse.thoughtText, secret)
    let second = try await session.respond(to: "And 1009?")
    XCTAssertEqual(second.rawResponse.placement, .cloud)
    // The thought stays in the transcript, where it is true.
    XCTAssertEqual(session.transcript.entries[1].content.thoughtText, secret)
    let last = try await server.lastRequest(cloud)
    let body = try XCTUnwrap(last["body"] as? [String: Any])
    let contents = try XCTUnwrap(body["contents"] as? [[String: Any]])
    XCTAssertEqual(contents.compactMap { $0["role"] as? String }, ["user", "model", "user"])
    let parts = contents.flatMap { $0["parts"] as? [[String: Any]] ?? [] }
    XCTAssertFalse(parts.contains { $0["thought"] != nil }, "\(parts)")
    XCTAssertFalse(
      try XCTUnwrap(String(data: JSONSerialization.data(withJSONObject: body), encoding: .utf8)).contains(secret))
    XCTAssertEqual((contents[1]["parts"] as? [[String: Any]])?.first?["text"] as? String, "1001 is not prime.")
  }
}

/// A model that answers through `base`, or fails as offline when switched. Test target only.
final class SwitchableModel: LanguageModel {
  private let base: any LanguageModel
  private let offline = Locked(false)

  init(_ base: any LanguageModel) { self.base = base }

  var isOffline: Bool {
    get { offline.withLock { $0 } }
    set { offline.withLock { $0 = newValue } }
  }

  var modelVersion: String { base.modelVersion }
  var placement: ModelPlacement { base.placement }
  var availability: Availability { base.availability }

  func streamResponse(to request: ModelRequest) -> ResponseDeltaStream {
    isOffline ? .failing(ScriptedError.offline) : base.streamResponse(to: request)
  }

  func respond(to request: ModelRequest) async throws -> GenerateContentResponse {
    if isOffline { throw ScriptedError.offline }
    return try await base.respond(to: request)
  }
}
