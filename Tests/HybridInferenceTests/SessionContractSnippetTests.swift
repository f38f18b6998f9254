// swift-format-ignore-file
// (The third contract snippet's lines below are kept byte for byte.)

import Foundation
import HybridInference
import XCTest

/// The lines of the third contract snippet (kept byte for byte) that the Codable
/// transcript, restoring, context overflow and placement build (the prompt
/// cache, media, routing and Vertex lines belong to other issues and join
/// this test when they land), unchanged, compile against the library and run
/// on the tiny model with the cloud a closed port.
final class SessionContractSnippetTests: XCTestCase {
  /// What the third snippet continues from (the first and second): the tiny model, a cloud at a
  /// closed port, a session that has answered "Hello" on the device, and
  /// that answer. ThirdContractSnippetTests starts from it too.
  static func afterFirstAnswer() async throws -> (
    local: LocalSystemModel, cloud: CloudGeminiModel, session: GenerativeModelSession,
    response: GenerativeModelSession.Response
  ) {
    let local = try LocalTestModels.tiny(contextSize: 512)
    let cloud = CloudGeminiModel(name: "gemini-3.1-flash-lite", apiKey: "unused",
                                 baseURL: URL(string: "http://127.0.0.1:9"))
    let session = GenerativeModelSession(model: .hybridModel(primary: local, secondary: cloud),
                                         instructions: "You help travellers.", logHandler: .silent)
    let options = HybridGenerationOptions.hybrid(
      gemini: nil, foundationModels: GenerationOptions(sampling: .greedy, maximumResponseTokens: 8))
    let response = try await session.respond(to: "Hello", options: options)
    return (local, cloud, session, response)
  }

  func testDesignSessionSnippet_compilesAndRuns() async throws {
    let (local, cloud, session, response) = try await Self.afterFirstAnswer()
    let (resumed, long) = try await sessionSnippet(
      session: session, local: local, cloud: cloud, response: response)
    XCTAssertEqual(resumed.transcript, session.transcript)
    XCTAssertEqual(resumed.tools.map(\.name), ["get_weather"])
    XCTAssertEqual(long.contextOverflow, .dropOldestTurns)
    XCTAssertEqual(response.rawResponse.placement, .onDevice)
  }
}

private func sessionSnippet(
  session: GenerativeModelSession, local: LocalSystemModel, cloud: CloudGeminiModel,
  response: GenerativeModelSession.Response
) async throws -> (GenerativeModelSession, GenerativeModelSession) {
  let cached = local  // the third snippet makes it with a PromptCache (PromptCacheContractTests' line)
  // ---- the third contract snippet, verbatim (the Codable transcript, contextOverflow and placement lines) ----
  // Save a conversation and go on with it later, in another process: Transcript is Codable
  // (a documented, versioned JSON format that keeps every part: tool calls, outputs, media).
  let saved = try JSONEncoder().encode(session.transcript)
  let resumed = GenerativeModelSession(model: .hybridModel(primary: local, secondary: cloud),
                                       transcript: try JSONDecoder().decode(Transcript.self, from: saved),
                                       tools: [GetWeather()])

  // A transcript longer than every model that could take it: drop whole exchanges, oldest
  // first, keeping the instructions and the newest prompt, instead of failing (default .fail).
  let long = GenerativeModelSession(model: .hybridModel(primary: cloud, secondary: cached),
                                    contextOverflow: .dropOldestTurns)

  // Which side answered, as a value.
  switch response.rawResponse.placement {
  case .onDevice: break
  case .cloud: break
  }
  // ---- end of the snippet ----
  return (resumed, long)
}
