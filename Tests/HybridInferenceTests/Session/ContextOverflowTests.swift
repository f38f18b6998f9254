import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// `contextOverflow: .dropOldestTurns`: the model that answers last gets the
/// newest exchanges that fit about half its window; the session keeps all.
final class ContextOverflowTests: XCTestCase {
  /// `count` exchanges of 20 words each (a ten-word prompt, a ten-word answer).
  private func conversation(_ count: Int, instructions: String? = "Be brief.") -> Transcript {
    var transcript = Transcript(instructions: instructions)
    for index in 0..<count {
      let words = Array(repeating: "w\(index)", count: 10).joined(separator: " ")
      transcript.entries.append(.prompt(words))
      transcript.entries.append(.response(Content(text: words), modelVersion: "earlier"))
    }
    return transcript
  }

  func testByDefault_aTranscriptTooLongFails() async throws {
    let model = WindowedModel("small", window: 100)
    let session = GenerativeModelSession(model: model, transcript: conversation(10), logHandler: .silent)
    do {
      _ = try await session.respond(to: "newest")
      XCTFail("answered")
    } catch HybridInferenceError.contextWindowExceeded(let size, let needed) {
      XCTAssertEqual(size, 100)
      XCTAssertEqual(needed, 203)
    }
    XCTAssertEqual(model.countCalls, 0, "nothing is counted under .fail")
  }

  func testDropOldestTurns_sendsTheNewestExchangesDownToHalfTheWindow() async throws {
    let model = WindowedModel("small", window: 100)
    let log = LogRecorder()
    let saved = conversation(10)
    let session = GenerativeModelSession(
      model: model, transcript: saved, contextOverflow: .dropOldestTurns, logHandler: log.handler)
    let answer = try await session.respond(to: "newest prompt")
    XCTAssertEqual(answer.content, "fits")
    let sent = try XCTUnwrap(model.answered.first)
    XCTAssertEqual(sent.transcript.instructions, "Be brief.")
    XCTAssertEqual(sent.transcript.entries.last?.text, "newest prompt")
    XCTAssertEqual(sent.transcript.entries.first?.role, .user)
    // 2 + 2 + 20k words: at most half of 100 means two exchanges; three would not.
    XCTAssertEqual(WindowedModel.tokens(of: sent), 44)
    XCTAssertEqual(Array(sent.transcript.entries.dropLast()), Array(saved.entries.suffix(4)))
    XCTAssertEqual(sent.contextOverflow, .dropOldestTurns)
    // The session keeps every turn.
    XCTAssertEqual(session.transcript.entries.count, saved.entries.count + 2)
    XCTAssertEqual(Array(session.transcript.entries.prefix(saved.entries.count)), saved.entries)
    let trims = log.records.filter { $0.message.contains("oldest exchanges") }
    XCTAssertEqual(trims.count, 1)
    XCTAssertTrue(trims[0].message.contains("without its 8 oldest exchanges (16 entries)"), trims[0].message)
    XCTAssertEqual(trims[0].level, .warning)
  }

  func testLaterTurns_dropTheSameExchangesFirst_soThePrefixStaysUntilTheNextTrim() async throws {
    let model = WindowedModel("small", window: 100)
    let log = LogRecorder()
    let session = GenerativeModelSession(
      model: model, transcript: conversation(10), contextOverflow: .dropOldestTurns, logHandler: log.handler)
    for turn in 0..<3 { _ = try await session.respond(to: "turn \(turn) of the newest") }
    let firsts = model.answered.map { $0.transcript.entries.first }
    XCTAssertEqual(Set(firsts.map { $0?.text }).count, 1, "one prefix across turns: \(firsts)")
    XCTAssertEqual(log.records.filter { $0.message.contains("oldest exchanges") }.count, 1, "trimmed once")
    // Until the window fills again: then it trims once more, back to half.
    for turn in 3..<12 { _ = try await session.respond(to: "turn \(turn) of the newest") }
    XCTAssertEqual(log.records.filter { $0.message.contains("oldest exchanges") }.count, 2)
    XCTAssertLessThanOrEqual(WindowedModel.tokens(of: try XCTUnwrap(model.answered.last)), 100)
  }

  func testAToolCallNeverLosesItsOutput() async throws {
    var transcript = Transcript(instructions: "Be brief.")
    for index in 0..<6 {
      let words = Array(repeating: "t\(index)", count: 10).joined(separator: " ")
      transcript.entries += [
        .prompt(words),
        .response(
          Content(parts: [Part(text: words), Part(functionCall: .init(id: "c\(index)", name: "get_weather"))]),
          modelVersion: "earlier"),
        .toolOutputs([.output(words, name: "get_weather", id: "c\(index)")]),
        .response(Content(text: words), modelVersion: "earlier"),
      ]
    }
    let model = WindowedModel("small", window: 100)
    let session = GenerativeModelSession(
      model: model, transcript: transcript, tools: [GetWeather()], contextOverflow: .dropOldestTurns,
      logHandler: .silent)
    _ = try await session.respond(to: "newest")
    let sent = try XCTUnwrap(model.answered.first)
    XCTAssertNil(sent.transcript.firstProblem(), "every output still has its call")
    XCTAssertEqual(sent.transcript.entries.count % 4, 1, "whole exchanges only")
    XCTAssertEqual(sent.tools.map(\.name), ["get_weather"], "the tool declarations stay")
  }

  func testAModelThatCannotCount_isTrimmedByAnEstimate() async throws {
    let model = WindowedModel("small", window: 100, counts: false)
    let session = GenerativeModelSession(
      model: model, transcript: conversation(10), contextOverflow: .dropOldestTurns, logHandler: .silent)
    _ = try await session.respond(to: "newest prompt")
    let sent = try XCTUnwrap(model.answered.first)
    XCTAssertLessThanOrEqual(WindowedModel.tokens(of: sent), 60)
    XCTAssertGreaterThan(sent.transcript.entries.count, 1)
  }

  func testNothingLeftToDrop_stillThrowsContextWindowExceeded() async throws {
    let model = WindowedModel("small", window: 10)
    let session = GenerativeModelSession(
      model: model, transcript: conversation(3), contextOverflow: .dropOldestTurns, logHandler: .silent)
    let long = Array(repeating: "word", count: 50).joined(separator: " ")
    do {
      _ = try await session.respond(to: long)
      XCTFail("answered")
    } catch HybridInferenceError.contextWindowExceeded(let size, _) {
      XCTAssertEqual(size, 10)
    }
    XCTAssertFalse(session.isResponding)
  }

  func testStreaming_trimsToo() async throws {
    let model = WindowedModel("small", window: 100)
    let session = GenerativeModelSession(
      model: model, transcript: conversation(10), contextOverflow: .dropOldestTurns, logHandler: .silent)
    let answer = try await session.streamResponse(to: "newest prompt").collect()
    XCTAssertEqual(answer.content, "fits")
    XCTAssertEqual(WindowedModel.tokens(of: try XCTUnwrap(model.answered.first)), 44)
  }

  // MARK: Hybrids

  func testAHybridWhosePrimaryCannotFit_fallsBackFirst() async throws {
    let local = WindowedModel("local", window: 100)
    let cloud = ScriptedModel("cloud", placement: .cloud)
    let log = LogRecorder()
    let saved = conversation(10)
    let session = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: cloud), transcript: saved, contextOverflow: .dropOldestTurns,
      logHandler: log.handler)
    for try await _ in session.streamResponse(to: "newest") {}
    _ = try await session.respond(to: "newest again")
    XCTAssertTrue(local.answered.isEmpty, "the device was not trimmed for")
    XCTAssertEqual(cloud.requests.count, 2)
    XCTAssertEqual(Array(try XCTUnwrap(cloud.requests.first).transcript.entries.dropLast()), saved.entries)
    XCTAssertEqual(log.fallbacks.count, 2)
    XCTAssertTrue(log.records.allSatisfy { !$0.message.contains("oldest exchanges") })
  }

  func testPreferDevice_theCloudFailingToo_theDeviceIsAskedAgainAndTrims() async throws {
    let local = WindowedModel("local", window: 100)
    let cloud = ScriptedModel(
      "cloud", placement: .cloud, script: [.fail(ScriptedError.offline), .fail(ScriptedError.offline)])
    let log = LogRecorder()
    let session = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: cloud), transcript: conversation(10),
      contextOverflow: .dropOldestTurns, logHandler: log.handler)
    let answer = try await session.respond(to: "newest")
    XCTAssertEqual(answer.rawResponse.modelVersion, "local")
    let streamed = try await session.streamResponse(to: "newest again").collect()
    XCTAssertEqual(streamed.rawResponse.modelVersion, "local")
    XCTAssertEqual(cloud.requests.count, 2, "the cloud was asked first, each time")
    XCTAssertEqual(local.answered.count, 2)
    XCTAssertTrue(local.answered.allSatisfy { WindowedModel.tokens(of: $0) <= 50 })
    XCTAssertEqual(log.records.filter { $0.message.contains("asking local again") }.count, 2)
    // Under .fail nothing is asked again: both failures are reported.
    let strict = GenerativeModelSession(
      model: .hybridModel(
        primary: local, secondary: ScriptedModel("cloud", placement: .cloud, script: [.fail(ScriptedError.offline)])),
      transcript: conversation(10), logHandler: .silent)
    do {
      _ = try await strict.respond(to: "newest")
      XCTFail("answered")
    } catch HybridInferenceError.bothModelsFailed(let primary, let secondary) {
      guard case .contextWindowExceeded? = primary as? HybridInferenceError else { return XCTFail("\(primary)") }
      guard case .offline? = secondary as? HybridInferenceError else { return XCTFail("\(secondary)") }
    }
  }

  func testPreferCloudOffline_theDeviceAnswersLastAndTrims() async throws {
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.fail(ScriptedError.offline)])
    let local = WindowedModel("local", window: 100)
    let session = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local), transcript: conversation(10),
      contextOverflow: .dropOldestTurns, logHandler: .silent)
    let answer = try await session.respond(to: "newest")
    XCTAssertEqual(answer.rawResponse.modelVersion, "local")
    XCTAssertEqual(answer.rawResponse.placement, .onDevice)
    XCTAssertEqual(try XCTUnwrap(cloud.requests.first).transcript.entries.count, 21, "the cloud got everything")
    XCTAssertLessThanOrEqual(WindowedModel.tokens(of: try XCTUnwrap(local.answered.first)), 50)
  }

  func testAPrimaryWithoutAUsableSecondary_trimsItself() async throws {
    let local = WindowedModel("local", window: 100)
    let cloud = ScriptedModel("cloud", placement: .cloud, availability: .unavailable(.missingAPIKey))
    let session = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: cloud), transcript: conversation(10),
      contextOverflow: .dropOldestTurns, logHandler: .silent)
    let answer = try await session.streamResponse(to: "newest").collect()
    XCTAssertEqual(answer.rawResponse.modelVersion, "local")
    XCTAssertEqual(WindowedModel.tokens(of: try XCTUnwrap(local.answered.first)), 43)
  }

  // MARK: On the real device

  func testTheTinyDevice_withASmallWindow_failsByDefault_andTrimsWhenAllowed() async throws {
    let local = try LocalTestModels.tiny(contextSize: 256)
    let options = HybridGenerationOptions.hybrid(
      gemini: nil, foundationModels: GenerationOptions(sampling: .greedy, maximumResponseTokens: 8))
    let saved = conversation(20)
    do {
      _ = try await GenerativeModelSession(model: local, transcript: saved, logHandler: .silent)
        .respond(to: "newest prompt", options: options)
      XCTFail("answered")
    } catch HybridInferenceError.contextWindowExceeded(let size, _) {
      XCTAssertEqual(size, 256)
    }
    let log = LogRecorder()
    let session = GenerativeModelSession(
      model: local, transcript: saved, contextOverflow: .dropOldestTurns, logHandler: log.handler)
    let answer = try await session.respond(to: "newest prompt", options: options)
    let prefilled = try XCTUnwrap(answer.rawResponse.usageMetadata?.promptTokenCount)
    XCTAssertLessThanOrEqual(prefilled, 128, "about half the window")
    XCTAssertGreaterThan(prefilled, 40, "not more than needed went")
    XCTAssertEqual(log.records.filter { $0.message.contains("oldest exchanges") }.count, 1)
    XCTAssertEqual(session.transcript.entries.count, saved.entries.count + 2)
    // The next turn starts from the same trimmed prefix, without a new trim.
    _ = try await session.respond(to: "and again", options: options)
    XCTAssertEqual(log.records.filter { $0.message.contains("oldest exchanges") }.count, 1)
  }
}
