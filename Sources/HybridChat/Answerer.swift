import HybridChatCore
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// Asks one prompt and reports the answer: the text on stdout as it streams,
/// the model's thoughts before it (`ThoughtDisplay`), then the `You used:`
/// line on stderr; or, with `--json`, one JSON object on stdout and nothing
/// else.
struct Answerer: Sendable {
  let terminal: Terminal
  let options: ChatOptions
  let recorder: FallbackRecorder

  func answer(_ prompt: Prompt, session: GenerativeModelSession, mode: InferenceMode)
    async throws
  {
    _ = recorder.takeFirst()  // a fallback of an earlier, failed answer is not this one's
    let display = ThoughtDisplay.choose(
      for: options, stdoutIsTerminal: terminal.stdoutIsTerminal, stderrIsTerminal: terminal.stderrIsTerminal)
    var thoughts = ThoughtWriter(display: display, terminal: terminal)
    let clock = ContinuousClock()
    let start = clock.now
    let response: GenerativeModelSession.Response
    var firstText: Duration?
    if options.noStream {
      response = try await session.respond(to: prompt, options: options.generationOptions)
      thoughts.show(response.rawResponse.thoughtText)
      thoughts.close()
      if !options.json { terminal.writeAnswer(Self.endingWithNewline(response.content)) }
    } else {
      var printedBytes = 0
      var progress = ThoughtProgress()
      var last: ResponseStream.Snapshot?
      do {
        for try await snapshot in session.streamResponse(to: prompt, options: options.generationOptions) {
          let newThought = progress.newThought(in: snapshot.rawResponse)
          if firstText == nil, !snapshot.content.isEmpty || !newThought.isEmpty { firstText = clock.now - start }
          thoughts.show(newThought)
          if !options.json {
            let new = snapshot.content.utf8.dropFirst(printedBytes)
            if !new.isEmpty {
              thoughts.close()
              terminal.writeAnswer(String(decoding: new, as: UTF8.self))
              printedBytes += new.count
            }
          }
          last = snapshot
        }
        // A cancelled consumer sees the stream simply end; it is not an answer.
        try Task.checkCancellation()
      } catch {
        thoughts.close()
        // Keep the error line off the end of a half-printed answer.
        if printedBytes > 0 { terminal.write("\n") }
        throw error
      }
      thoughts.close()
      guard let last else {
        throw HybridInferenceError.malformedResponse("the stream ended without a response")
      }
      if !options.json, !last.content.hasSuffix("\n") { terminal.write("\n") }
      response = GenerativeModelSession.Response(content: last.content, rawResponse: last.rawResponse)
    }
    let summary = ResponseSummary(
      content: response.content, response: response.rawResponse, mode: mode,
      fallback: recorder.takeFirst(),
      timing: ResponseTiming(total: clock.now - start, timeToFirstToken: firstText),
      thoughts: options.hideThoughts ? nil : response.rawResponse.thoughtText)
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

/// Writes thoughts where `ThoughtDisplay` says, framed by `ThoughtFraming`;
/// does nothing when they are not shown.
private struct ThoughtWriter {
  let display: ThoughtDisplay?
  let terminal: Terminal
  var framing: ThoughtFraming?

  init(display: ThoughtDisplay?, terminal: Terminal) {
    self.display = display
    self.terminal = terminal
    framing = display.map { ThoughtFraming(style: $0.style) }
  }

  mutating func show(_ piece: String) {
    guard let display, !piece.isEmpty, var framing else { return }
    terminal.write(framing.thought(piece), to: display.destination)
    self.framing = framing
  }

  mutating func close() {
    guard let display, var framing else { return }
    terminal.write(framing.close(), to: display.destination)
    self.framing = framing
  }
}
