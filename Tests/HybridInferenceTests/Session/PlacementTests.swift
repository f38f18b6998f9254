import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// `rawResponse.placement` says which side answered, on every response and
/// every snapshot, and is not part of the REST encoding.
final class PlacementTests: XCTestCase {
  func testPlacement_onRespondAndEverySnapshot_followsTheSideThatAnswered() async throws {
    let local = ScriptedModel("local", placement: .onDevice, script: [.answer(["a"]), .answer(["b", "c"])])
    let session = GenerativeModelSession(model: local, logHandler: .silent)
    let alone = try await session.respond(to: "x")
    XCTAssertEqual(alone.rawResponse.placement, .onDevice)
    var snapshots = 0
    for try await snapshot in session.streamResponse(to: "y") {
      XCTAssertEqual(snapshot.rawResponse.placement, .onDevice)
      snapshots += 1
    }
    XCTAssertGreaterThan(snapshots, 1)

    // A prefer-on-device hybrid that falls back: the cloud answered.
    let failing = ScriptedModel(
      "local", placement: .onDevice, script: [.fail(ScriptedError.decode), .fail(ScriptedError.decode)])
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.answer(["a"]), .answer(["b", "c"])])
    let hybrid = GenerativeModelSession(model: .hybridModel(primary: failing, secondary: cloud), logHandler: .silent)
    let fellBack = try await hybrid.respond(to: "x")
    XCTAssertEqual(fellBack.rawResponse.placement, .cloud)
    for try await snapshot in hybrid.streamResponse(to: "y") {
      XCTAssertEqual(snapshot.rawResponse.placement, .cloud)
    }

    // A prefer-cloud hybrid offline: the device answered, though the hybrid's own placement is the cloud's.
    let offline = ScriptedModel("cloud", placement: .cloud, script: [.fail(ScriptedError.offline)])
    let device = ScriptedModel("local", placement: .onDevice)
    let preferCloud = HybridModel(primary: offline, secondary: device)
    XCTAssertEqual(preferCloud.placement, .cloud)
    let offlineAnswer = try await GenerativeModelSession(model: preferCloud, logHandler: .silent).respond(to: "x")
    XCTAssertEqual(offlineAnswer.rawResponse.placement, .onDevice)
    // Nested: the innermost model that answered decides.
    let nested = HybridModel(
      primary: ScriptedModel("c", placement: .cloud, script: [.fail(ScriptedError.offline)]),
      secondary: HybridModel(primary: ScriptedModel("d", placement: .onDevice), secondary: cloud))
    for try await snapshot in GenerativeModelSession(model: nested, logHandler: .silent).streamResponse(to: "z") {
      XCTAssertEqual(snapshot.rawResponse.placement, .onDevice)
    }
  }

  func testPlacementAndProducer_areNotPartOfTheRESTEncoding() throws {
    var response = GenerateContentResponse(modelVersion: "m", producer: "https://example.com/v1beta/models/m")
    response.placement = .onDevice
    let object = try XCTUnwrap(
      JSONSerialization.jsonObject(with: JSONEncoder().encode(response)) as? [String: Any])
    XCTAssertEqual(Set(object.keys), ["candidates", "modelVersion"])
    let decoded = try JSONDecoder().decode(
      GenerateContentResponse.self, from: Data(#"{"modelVersion": "m", "placement": "onDevice"}"#.utf8))
    XCTAssertEqual(decoded.placement, .cloud, "a decoded REST response is the cloud's")
    XCTAssertNil(decoded.producer)
  }

  func testTheTinyDevice_isOnDevice_respondAndStream() async throws {
    let session = GenerativeModelSession(model: try LocalTestModels.tiny(), logHandler: .silent)
    let options = HybridGenerationOptions.hybrid(
      gemini: nil, foundationModels: GenerationOptions(sampling: .greedy, maximumResponseTokens: 4))
    let answer = try await session.respond(to: "x", options: options)
    XCTAssertEqual(answer.rawResponse.placement, .onDevice)
    for try await snapshot in session.streamResponse(to: "y", options: options) {
      XCTAssertEqual(snapshot.rawResponse.placement, .onDevice)
    }
  }
}
