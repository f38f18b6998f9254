// swift-format-ignore-file
// (The third contract snippet below is kept byte for byte.)

import Foundation
import HybridInference
import XCTest

/// The third contract snippet, whole and kept byte for byte: it compiles against the
/// library as written, with `local`, `cloud`, `session`, `response` and
/// `GetWeather` from the first and second snippets as the snippet says. Run, it goes as far as
/// its placeholder photo: `Data()` is no image, and the session refuses it
/// (`invalidAttachment`) before anything is sent. Each part runs for real in
/// its own test (SessionContractSnippetTests, PromptCacheContractTests,
/// MediaContractSnippetTests, FallbackPolicyTests, CloudVertexTests).
final class ThirdContractSnippetTests: XCTestCase {
  func testDesignThirdSnippet_compiles_andRunsUpToItsPlaceholderPhoto() async throws {
    let (local, cloud, session, response) = try await SessionContractSnippetTests.afterFirstAnswer()
    do {
      try await thirdSnippet(local: local, cloud: cloud, session: session, response: response)
      XCTFail("the snippet's empty photo was sent")
    } catch HybridInferenceError.invalidAttachment(let why) {
      XCTAssertFalse(why.isEmpty)
    }
    XCTAssertEqual(session.transcript.entries.count, 2, "the refused prompt left the transcript as it was")
  }
}

private func thirdSnippet(
  local: LocalSystemModel, cloud: CloudGeminiModel, session: GenerativeModelSession,
  response: GenerativeModelSession.Response
) async throws {
  // ---- the third contract snippet, verbatim ----

  // Save a conversation and go on with it later, in another process: Transcript is Codable
  // (a documented, versioned JSON format that keeps every part: tool calls, outputs, media).
  let saved = try JSONEncoder().encode(session.transcript)
  let resumed = GenerativeModelSession(model: .hybridModel(primary: local, secondary: cloud),
                                       transcript: try JSONDecoder().decode(Transcript.self, from: saved),
                                       tools: [GetWeather()])

  // The device keeps prompt state on disk: a session whose prompt starts with a saved prefix
  // (a resumed conversation, or the same long instructions in another process) skips that prefill.
  let cache = PromptCache.directory(URL(fileURLWithPath: "/var/cache/app/kv"), maximumBytes: 2 << 30)
  let cached = LocalSystemModel(modelPath: "/models/smollm2.gguf", promptCache: cache)
  print(cache.currentDiskUsage)        // bytes on disk; cache.removeAll() empties it

  // A transcript longer than every model that could take it: drop whole exchanges, oldest
  // first, keeping the instructions and the newest prompt, instead of failing (default .fail).
  let long = GenerativeModelSession(model: .hybridModel(primary: cloud, secondary: cached),
                                    contextOverflow: .dropOldestTurns)

  // Which side answered, as a value.
  switch response.rawResponse.placement {
  case .onDevice: break
  case .cloud: break
  }

  // Prompts with images and other media. The cloud reads them; a device that cannot throws
  // unsupportedRequest, so prefer-on-device falls back with the attachment intact.
  let photo = Data()   // JPEG bytes
  let seen = try await session.respond(
    to: Prompt("What is in this picture?", attachments: [.image(photo, mimeType: "image/jpeg")]))
  for try await snapshot in session.streamResponse(to: Prompt("Describe it.", attachments: [.image(photo, mimeType: "image/jpeg")])) {
    _ = snapshot.content
  }

  // Routing beyond the four modes.
  let tolerant = HybridModel(primary: cloud, secondary: local,
                             fallback: FallbackPolicy.default.adding(.rateLimited, .serverError))
  let hedged = HybridModel(primary: local, secondary: cloud, hedgeAfter: .milliseconds(800))
  let resilient = HybridModel(primary: cloud, secondary: local, continuesInterruptedAnswers: true)

  // Gemini on Vertex AI, with Google's server-side tools.
  let vertex = CloudGeminiModel(name: "gemini-3.1-flash-lite",
                                backend: .vertexAI(project: "my-project", location: "global"),
                                authorization: .bearerToken { "ya29.token-from-your-provider" },
                                serverTools: [.googleSearch(), .codeExecution(), .urlContext()])
  // ---- end of the snippet ----
  _ = (resumed, cached, long, seen, tolerant, hedged, resilient, vertex)
}
