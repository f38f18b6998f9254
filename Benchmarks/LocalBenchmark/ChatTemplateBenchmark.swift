import Foundation
import HybridInferenceLlama

/// The render benchmark of the chat template engine (`local-benchmark
/// render`): how long one prompt takes to build from a long conversation on
/// a model's own template (`ChatTemplateSeam`).
enum ChatTemplateBenchmark {
  /// The figures of one run: parse time and the median render time, in milliseconds.
  struct Figures {
    var parseMilliseconds: Double
    var renderMilliseconds: Double
    /// One render of the template alone, without the placeholder render and split.
    var engineMilliseconds: Double
    var promptCharacters: Int
    /// Whether the model's own template rendered it (not llama.cpp's fallback).
    var usedModelTemplate: Bool
  }

  /// Renders a `turns`-message conversation (user and assistant alternating)
  /// on the template of the GGUF at `modelPath`, `iterations` times.
  static func run(modelPath: String, turns: Int, iterations: Int) async throws -> Figures {
    let source = try await ChatTemplateSeam.source(ofModelAt: modelPath)
    let clock = ContinuousClock()
    let parseStart = clock.now
    let template = ChatTemplateSeam(source)
    let parse = clock.now - parseStart
    let conversation = ChatTemplateSeam.Conversation(
      (0..<turns).map { turn in
        (
          role: turn.isMultiple(of: 2) ? "user" : "assistant",
          content: "Message \(turn): a sentence of ordinary length, to stand for a real turn of a chat."
        )
      })
    var samples: [Double] = []
    var prompt: ChatTemplateSeam.Prompt?
    for _ in 0..<iterations {
      let start = clock.now
      prompt = template.render(conversation)
      samples.append(milliseconds(clock.now - start))
    }
    samples.sort()
    var engine: [Double] = []
    for _ in 0..<iterations {
      let start = clock.now
      _ = template.renderText(conversation)
      engine.append(milliseconds(clock.now - start))
    }
    engine.sort()
    let text = prompt?.text ?? ""
    return Figures(
      parseMilliseconds: milliseconds(parse), renderMilliseconds: samples[samples.count / 2],
      engineMilliseconds: engine[engine.count / 2],
      promptCharacters: text.count, usedModelTemplate: template.renderText(conversation) == text)
  }

  private static func milliseconds(_ duration: Duration) -> Double { duration.seconds * 1000 }
}
