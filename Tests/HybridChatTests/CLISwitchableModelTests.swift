import HybridChatCore
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote
import Synchronization
import XCTest

/// `/mode` switches the model under a session: the conversation carries over
/// and the new model gets its half of the options.
final class CLISwitchableModelTests: XCTestCase {
  private let options = ChatOptions(temperature: 0.3, maxTokens: 5).generationOptions

  func testSwitchingKeepsTheConversation() async throws {
    let device = RecordingModel("device", placement: .onDevice)
    let cloud = RecordingModel("cloud", placement: .cloud)
    let model = SwitchableModel(device, options: options)
    let session = GenerativeModelSession(model: model, logHandler: .silent)

    let first = try await session.respond(to: "one", options: options)
    XCTAssertEqual(first.rawResponse.modelVersion, "device")
    model.switchTo(cloud)
    XCTAssertEqual(model.modelVersion, "cloud")
    XCTAssertEqual(model.placement, .cloud)
    let second = try await session.streamResponse(to: "two", options: options).collect()
    XCTAssertEqual(second.rawResponse.modelVersion, "cloud")

    let request = try XCTUnwrap(cloud.requests.first)
    XCTAssertEqual(request.transcript.entries.map(\.text), ["one", "device says hi", "two"])
    XCTAssertEqual(request.options.gemini, GenerationConfig(temperature: 0.3, maxOutputTokens: 5))
  }

  func testAHybridUnderneathGetsBothHalves() async throws {
    let device = RecordingModel("device", placement: .onDevice)
    let cloud = RecordingModel("cloud", placement: .cloud)
    let model = SwitchableModel(HybridModel(primary: device, secondary: cloud), options: options)
    let session = GenerativeModelSession(model: model, logHandler: .silent)
    _ = try await session.respond(to: "one", options: options)
    XCTAssertEqual(
      device.requests.first?.options.foundationModels,
      GenerationOptions(temperature: 0.3, maximumResponseTokens: 5))
  }

  func testAvailabilityFollowsTheCurrentModel() {
    let model = SwitchableModel(
      RecordingModel("cloud", placement: .cloud, availability: .unavailable(.missingAPIKey)),
      options: .default)
    XCTAssertEqual(model.availability, .unavailable(.missingAPIKey))
    model.switchTo(RecordingModel("device", placement: .onDevice))
    XCTAssertEqual(model.availability, .available)
  }

  func testFallbackRecorderReportsTheFirstAndForgets() {
    let recorder = FallbackRecorder()
    XCTAssertNil(recorder.takeFirst())
    recorder.record(FallbackEvent(from: "a", to: "b", reason: .unavailable(.modelNotReady)))
    recorder.record(FallbackEvent(from: "b", to: "c", reason: .unavailable(.missingAPIKey)))
    XCTAssertEqual(recorder.takeFirst()?.from, "a")
    XCTAssertNil(recorder.takeFirst())
  }
}

/// A model that answers "<name> says hi" and remembers every request.
private final class RecordingModel: LanguageModel {
  let modelVersion: String
  let placement: ModelPlacement
  let availability: Availability
  private let received = Mutex<[ModelRequest]>([])

  init(_ name: String, placement: ModelPlacement, availability: Availability = .available) {
    self.modelVersion = name
    self.placement = placement
    self.availability = availability
  }

  var requests: [ModelRequest] { received.withLock { $0 } }

  func streamResponse(to request: ModelRequest)
    -> ResponseDeltaStream
  {
    received.withLock { $0.append(request) }
    let answer = GenerateContentResponse(
      candidates: [
        Candidate(content: Content(role: "model", text: "\(modelVersion) says hi"), finishReason: .stop)
      ],
      modelVersion: modelVersion)
    return .producing { continuation in continuation.yield(answer) }
  }
}
