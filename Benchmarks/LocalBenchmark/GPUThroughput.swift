import Foundation
import HybridInferenceCore
import HybridInferenceLlama

/// Prefill and decode with layers on a GPU, beside `llama-bench -ngl` on the
/// same device (`local-benchmark gpu`): the library's offload against
/// llama.cpp's own, each on the same backend, alternated one repetition at a
/// time so that both see the same minutes of the machine.
enum GPUThroughput {
  static func run(modelPath: String, llamaBench: String, layers: Int, threads: Int, runs: Int) async throws {
    let model = LocalSystemModel(
      modelPath: modelPath, contextSize: 768, threads: threads, batchSize: 512, gpu: .layers(layers))
    try await model.prepare()
    guard let offload = model.offload, offload.isOffloaded else {
      throw BenchmarkError("no layer went to a GPU: \(model.offload?.description ?? "not loaded")")
    }
    let device = LocalSystemModel.computeDevices.first { $0.name == offload.deviceName }
    let prompt = try await LocalThroughput.prompt(of: 512, model: model)
    _ = try await LocalThroughput.decode(model: model, tokens: 8)  // warm-up
    var ours = (prefill: [Double](), decode: [Double]())
    var theirs = (prefill: [Double](), decode: [Double]())
    var (prefilled, generated) = (0, 0)
    for run in 0..<runs {
      let (prefill, prefillTokens, _) = try await LocalThroughput.prefill(model: model, prompt: prompt, run: run)
      let (decode, decodeTokens) = try await LocalThroughput.decode(model: model, tokens: 128)
      // Three repetitions, the median: on lavapipe one llama-bench repetition differs
      // from the next by up to a fifth.
      let reference = try LlamaBench.run(
        executable: llamaBench, model: modelPath, threads: threads, batchSize: 512, repetitions: 3,
        gpuLayers: layers)
      ours.prefill.append(prefill)
      ours.decode.append(decode)
      theirs.prefill.append(reference.prefillTokensPerSecond)
      theirs.decode.append(reference.decodeTokensPerSecond)
      (prefilled, generated) = (prefillTokens, decodeTokens)
    }
    let file = URL(fileURLWithPath: modelPath).lastPathComponent
    let on =
      "\(file) on \(offload.deviceName) (\(device?.description ?? "?")), \(offload.layers) of \(offload.totalLayers) layers"
    for (kind, size, mine, reference, test) in [
      ("prefill", prefilled, median(ours.prefill), median(theirs.prefill), "pp512"),
      ("decode", generated, median(ours.decode), median(theirs.decode), "tg128"),
    ] {
      let tag = kind == "prefill" ? "pp\(size)" : "tg\(size)"
      print(
        "gpu \(kind) \(tag) of \(on), median of \(runs): HybridInference \(format(mine)) t/s, llama-bench -ngl \(layers) \(test) \(format(reference)) t/s, ratio \(format(mine / reference, 3))"
      )
    }
  }
}
