import Foundation
import HybridInferenceCore
import HybridInferenceJinja

/// The render benchmark of the chat template engine (`make bench`): how long
/// one prompt takes to build from a long conversation on a model's own
/// template. Not API: exposed to the benchmark target only.
package enum ChatTemplateBenchmark {
  /// The figures of one run: parse time and the median render time, in milliseconds.
  package struct Figures: Sendable {
    package var parseMilliseconds: Double
    package var renderMilliseconds: Double
    /// One render of the template alone, without the placeholder render and split.
    package var engineMilliseconds: Double
    package var promptCharacters: Int
    /// Whether the model's own template rendered it (not llama.cpp's fallback).
    package var usedModelTemplate: Bool
  }

  /// Renders a `turns`-message conversation (user and assistant alternating)
  /// on the template of the GGUF at `modelPath`, `iterations` times.
  package static func run(modelPath: String, turns: Int, iterations: Int) async throws -> Figures {
    let model = try await LocalSystemModel(modelPath: modelPath).loadedModel(progress: nil)
    let clock = ContinuousClock()
    let parseStart = clock.now
    let template = ChatTemplate(
      template: model.chatTemplate, bosToken: model.template.bosToken, eosToken: model.template.eosToken)
    let parse = clock.now - parseStart
    let messages = (0..<turns).map { turn in
      ChatTemplate.Message(
        role: turn.isMultiple(of: 2) ? "user" : "assistant",
        content: "Message \(turn): a sentence of ordinary length, to stand for a real turn of a chat.")
    }
    var samples: [Double] = []
    var prompt = RenderedPrompt(segments: [])
    for _ in 0..<iterations {
      let start = clock.now
      prompt = template.render(messages, log: .silent)
      samples.append(milliseconds(clock.now - start))
    }
    samples.sort()
    var engine: [Double] = []
    for _ in 0..<iterations {
      let start = clock.now
      _ = try? template.renderText(messages, addGenerationPrompt: true)
      engine.append(milliseconds(clock.now - start))
    }
    engine.sort()
    let real = try? template.renderText(messages, addGenerationPrompt: true)
    return Figures(
      parseMilliseconds: milliseconds(parse), renderMilliseconds: samples[samples.count / 2],
      engineMilliseconds: engine[engine.count / 2],
      promptCharacters: prompt.text.count, usedModelTemplate: real == prompt.text)
  }

  private static func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
  }
}
