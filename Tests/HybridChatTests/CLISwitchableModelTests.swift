import Foundation
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
    let model = SwitchableModel(device)
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
    let model = SwitchableModel(HybridModel(primary: device, secondary: cloud))
    let session = GenerativeModelSession(model: model, logHandler: .silent)
    _ = try await session.respond(to: "one", options: options)
    XCTAssertEqual(
      device.requests.first?.options.foundationModels,
      GenerationOptions(temperature: 0.3, maximumResponseTokens: 5))
  }

  /// A required tool choice holds for the first round only: the session
  /// switches the request to `.auto` once the tools have answered, and the
  /// model underneath must see that switch. It once got the options the
  /// switchable model was built with on every round, so a model that obeys
  /// `.required` called the tool until `tooManyToolRounds`.
  func testARequiredToolChoice_holdsForTheFirstRoundOnly() async throws {
    var options = self.options
    options.toolChoice = .required
    let device = ToolChoiceModel()
    let model = SwitchableModel(device)
    let session = GenerativeModelSession(
      model: model, tools: [TimeTool(now: { Date(timeIntervalSince1970: 0) })], logHandler: .silent)
    let answer = try await session.respond(to: "What time is it?", options: options)
    XCTAssertEqual(answer.content, "after the tool")
    XCTAssertEqual(device.requests.map(\.options.toolChoice), [.required, .auto])
    XCTAssertEqual(session.transcript.entries.flatMap { $0.toolCalls.map(\.name) }, ["current_time"])
  }

  func testAvailabilityFollowsTheCurrentModel() {
    let model = SwitchableModel(
      RecordingModel("cloud", placement: .cloud, availability: .unavailable(.missingAPIKey)))
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

/// A model that obeys the tool choice the way Gemini's `ANY` does: while the
/// request says `.required` it calls the first tool offered, otherwise it
/// answers "after the tool".
private final class ToolChoiceModel: LanguageModel {
  let modelVersion = "tool-choice"
  let placement = ModelPlacement.onDevice
  let availability = Availability.available
  private let received = Mutex<[ModelRequest]>([])

  var requests: [ModelRequest] { received.withLock { $0 } }

  func streamResponse(to request: ModelRequest) -> ResponseDeltaStream {
    received.withLock { $0.append(request) }
    let parts: [Part]
    if request.options.toolChoice.mode == .required, let tool = request.offeredTools.first {
      parts = [Part(functionCall: Part.FunctionCall(name: tool.name, args: .object([:])))]
    } else {
      parts = [Part(text: "after the tool")]
    }
    let answer = GenerateContentResponse(
      candidates: [Candidate(content: Content(role: "model", parts: parts), finishReason: .stop)],
      modelVersion: modelVersion)
    return .producing { continuation in continuation.yield(answer) }
  }
}
