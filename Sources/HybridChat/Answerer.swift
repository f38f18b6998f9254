import HybridChatCore
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// Asks one prompt and reports the answer: the text on stdout as it streams,
/// then the `You used:` line on stderr; or, with `--json`, one JSON object on
/// stdout and nothing else.
struct Answerer: Sendable {
  let terminal: Terminal
  let options: ChatOptions
  let recorder: FallbackRecorder

  func answer(_ prompt: Prompt, session: GenerativeModelSession, mode: InferenceMode)
    async throws
  {
    _ = recorder.takeFirst()  // a fallback of an earlier, failed answer is not this one's
    let clock = ContinuousClock()
    let start = clock.now
    let response: GenerativeModelSession.Response
    var firstText: Duration?
    if options.noStream {
      response = try await session.respond(to: prompt, options: options.generationOptions)
      if !options.json { terminal.writeAnswer(Self.endingWithNewline(response.content)) }
    } else {
      var printedBytes = 0
      var last: ResponseStream.Snapshot?
      do {
        for try await snapshot in session.streamResponse(to: prompt, options: options.generationOptions) {
          if firstText == nil, !snapshot.content.isEmpty { firstText = clock.now - start }
          if !options.json {
            let new = snapshot.content.utf8.dropFirst(printedBytes)
            if !new.isEmpty {
              terminal.writeAnswer(String(decoding: new, as: UTF8.self))
              printedBytes += new.count
            }
          }
          last = snapshot
        }
        // A cancelled consumer sees the stream simply end; it is not an answer.
        try Task.checkCancellation()
      } catch {
        // Keep the error line off the end of a half-printed answer.
        if printedBytes > 0 { terminal.write("\n") }
        throw error
      }
      guard let last else {
        throw HybridInferenceError.malformedResponse("the stream ended without a response")
      }
      if !options.json, !last.content.hasSuffix("\n") { terminal.write("\n") }
      response = GenerativeModelSession.Response(content: last.content, rawResponse: last.rawResponse)
    }
    let summary = ResponseSummary(
      content: response.content, response: response.rawResponse, mode: mode,
      fallback: recorder.takeFirst(),
      timing: ResponseTiming(total: clock.now - start, timeToFirstToken: firstText))
    if options.json {
      terminal.write(try summary.jsonLine() + "\n")
    } else {
      terminal.errorLine(summary.usageLine)
    }
  }

  private static func endingWithNewline(_ text: String) -> String {
    text.hasSuffix("\n") ? text : text + "\n"
  }
}
