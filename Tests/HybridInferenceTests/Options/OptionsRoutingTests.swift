import HybridInference
import XCTest

/// Each model reads only its own half of the options, and options are
/// validated at request time.
final class OptionsRoutingTests: XCTestCase {
  private let logs = LogRecorder()

  func testGenerationConfigReachesOnlyCloud_generationOptionsOnlyLocal() async throws {
    let local = ScriptedModel("local", placement: .onDevice)
    let cloud = ScriptedModel("cloud", placement: .cloud)
    local.enqueue(.fail(ScriptedError.decode))
    let config = GenerationConfig(
      temperature: 0.8, topP: 0.9, thinkingConfig: ThinkingConfig(thinkingLevel: .high))
    let options = GenerationOptions(sampling: .random(probabilityThreshold: 0.9), temperature: 0.8)
    let session = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: cloud), logHandler: logs.handler)
    _ = try await session.respond(
      to: "Hi", options: .hybrid(gemini: config, foundationModels: options))

    let localOptions = try XCTUnwrap(local.requests.first?.options)
    XCTAssertEqual(localOptions.foundationModels, options)
    XCTAssertNil(localOptions.gemini, "the local model must not see the cloud's config")
    let cloudOptions = try XCTUnwrap(cloud.requests.first?.options)
    XCTAssertEqual(cloudOptions.gemini, config)
    XCTAssertNil(cloudOptions.foundationModels, "the cloud must not see the local options")
  }

  func testAWrapperAroundAHybrid_passesBothHalvesThrough() async throws {
    // A wrapper is not a `HybridModel`, and its placement is its primary's;
    // routing by type used to strip the cloud's half before the hybrid saw it.
    let local = ScriptedModel("local", placement: .onDevice)
    let cloud = ScriptedModel("cloud", placement: .cloud)
    local.enqueue(.fail(ScriptedError.decode))
    let config = GenerationConfig(temperature: 0.2)
    let options = GenerationOptions(temperature: 0.4)
    let session = GenerativeModelSession(
      model: ForwardingModel(HybridModel(primary: local, secondary: cloud)), logHandler: logs.handler)
    let response = try await session.respond(to: "Hi", options: .hybrid(gemini: config, foundationModels: options))
    XCTAssertEqual(response.rawResponse.modelVersion, "cloud")
    XCTAssertEqual(local.requests.first?.options.foundationModels, options)
    XCTAssertEqual(cloud.requests.first?.options.gemini, config)
  }

  /// The role names build the very values the Firebase spellings build.
  func testRoleNames_equalTheFirebaseSpellings() {
    let config = GenerationConfig(temperature: 0.3, topK: 5)
    let options = GenerationOptions(sampling: .greedy, maximumResponseTokens: 12)
    XCTAssertEqual(
      HybridGenerationOptions.hybrid(cloud: config, onDevice: options),
      .hybrid(gemini: config, foundationModels: options))
    XCTAssertEqual(HybridGenerationOptions.hybrid(cloud: nil, onDevice: options), .foundationModels(options))
    XCTAssertEqual(HybridGenerationOptions.cloud(config), .gemini(config))
    XCTAssertEqual(HybridGenerationOptions.onDevice(options), .foundationModels(options))
    XCTAssertNotEqual(HybridGenerationOptions.cloud(config), .default, "the cloud half is kept")
    XCTAssertNotEqual(HybridGenerationOptions.onDevice(options), .default, "the on-device half is kept")
  }

  /// Each role's half reaches only the model in that role, Gemini's half
  /// reaching the cloud whatever the cloud model is.
  func testRoleNames_routeAsTheFirebaseSpellings() async throws {
    let local = ScriptedModel("local", placement: .onDevice)
    let cloud = ScriptedModel("fleet", placement: .cloud)
    local.enqueue(.fail(ScriptedError.decode))
    let config = GenerationConfig(temperature: 0.7)
    let options = GenerationOptions(temperature: 0.1)
    let session = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: cloud), logHandler: logs.handler)
    _ = try await session.respond(to: "Hi", options: .hybrid(cloud: config, onDevice: options))
    XCTAssertEqual(local.requests.first?.options.foundationModels, options)
    XCTAssertNil(local.requests.first?.options.gemini, "the device must not see the cloud's config")
    XCTAssertEqual(cloud.requests.first?.options.gemini, config)
    XCTAssertNil(cloud.requests.first?.options.foundationModels, "the cloud must not see the device's options")

    let onlyLocal = GenerativeModelSession(model: local, logHandler: logs.handler)
    _ = try await onlyLocal.respond(to: "Hi", options: .cloud(config))
    XCTAssertEqual(local.requests.last?.options, .default, "the cloud's half is not the device's")
    _ = try await onlyLocal.respond(to: "Hi", options: .onDevice(options))
    XCTAssertEqual(local.requests.last?.options.foundationModels, options)
  }

  func testNilHalf_meansDefaultsForThatModel() async throws {
    let local = ScriptedModel("local", placement: .onDevice)
    let session = GenerativeModelSession(model: local, logHandler: logs.handler)
    _ = try await session.respond(to: "Hi", options: .gemini(GenerationConfig(temperature: 1)))
    let received = try XCTUnwrap(local.requests.first?.options)
    XCTAssertEqual(received, .default)
  }

  func testOutOfRangeOptions_areTypedErrorsAtRequestTime() async throws {
    let invalid: [HybridGenerationOptions] = [
      .gemini(GenerationConfig(temperature: -0.1)),
      .gemini(GenerationConfig(topP: 1.5)),
      .gemini(GenerationConfig(topP: -0.1)),
      .gemini(GenerationConfig(maxOutputTokens: 0)),
      .gemini(GenerationConfig(topK: 0)),
      .foundationModels(GenerationOptions(temperature: -1)),
      .foundationModels(GenerationOptions(maximumResponseTokens: 0)),
      .foundationModels(GenerationOptions(sampling: .random(top: 0))),
      .foundationModels(GenerationOptions(sampling: .random(probabilityThreshold: 1.5))),
    ]
    let local = ScriptedModel("local", placement: .onDevice)
    let session = GenerativeModelSession(model: local, logHandler: logs.handler)
    for options in invalid {
      do {
        _ = try await session.respond(to: "Hi", options: options)
        XCTFail("\(options) must be refused")
      } catch HybridInferenceError.invalidOptions(let why) {
        XCTAssertFalse(why.isEmpty)
      }
      do {
        _ = try await session.streamResponse(to: "Hi", options: options).collect()
        XCTFail("\(options) must be refused when streaming")
      } catch HybridInferenceError.invalidOptions {}
    }
    XCTAssertTrue(local.requests.isEmpty, "nothing is sent with invalid options")
    XCTAssertFalse(session.isResponding)
  }

  func testEmptyPrompt_isRefused() async throws {
    let session = GenerativeModelSession(
      model: ScriptedModel("local", placement: .onDevice), logHandler: logs.handler)
    do {
      _ = try await session.respond(to: "")
      XCTFail("must throw")
    } catch HybridInferenceError.emptyPrompt {}
  }
}

/// A model that forwards to another, as an app's own wrapper (logging,
/// metrics, a switch) would.
private struct ForwardingModel: LanguageModel {
  let wrapped: any LanguageModel
  init(_ wrapped: any LanguageModel) { self.wrapped = wrapped }
  var modelVersion: String { wrapped.modelVersion }
  var placement: ModelPlacement { wrapped.placement }
  var availability: Availability { wrapped.availability }
  func streamResponse(to request: ModelRequest) -> ResponseDeltaStream {
    wrapped.streamResponse(to: request)
  }
}
