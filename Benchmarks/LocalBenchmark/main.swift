import Foundation
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

// Local benchmarks: throughput beside llama-bench, multi-turn time to first token
// with and without KV reuse, cancellation latency, and peak memory for 1 and 4
// sessions (each command's tables in Benchmarks/RESULTS.md, named below).
//
//   local-benchmark throughput <model.gguf> <llama-bench> [threads] [batch] [runs]
//   local-benchmark multiturn <model.gguf>
//   local-benchmark cancel <model.gguf>
//   local-benchmark memory <model.gguf> <sessions>
//   local-benchmark render <model.gguf>   (a 50-turn prompt on the model's own template: "Chat template render and parity")
//   local-benchmark grammar <model.gguf> [threads] [runs]
//   local-benchmark decode <model.gguf> <llama-bench> [threads] [runs]   ("Streamed decode")
//   local-benchmark concurrent <model.gguf> [threads] [runs] [on|off|auto]   (1, 4, 16 sessions, beside llama-server -np 4 driven by scripts/llama-server-sessions.py: "Sessions answering at once")
//   local-benchmark depth <model.gguf> <llama-bench> [threads] [runs]   (decode at depth, -fa 0 / -fa 1, a 10-turn chat: "Attention at depth")
//   local-benchmark probe <model.gguf> <llama-bench> <depth> <fa 0|1> [runs] [threads]   (where a streamed decode's time goes)
//   local-benchmark probe-c <model.gguf> <depth> <fa 0|1> [rounds] [tokens] [variant]   (llama.cpp's C API alone: llama-bench's context vs the library's)
//   local-benchmark stream <model.gguf> <depth> <fa 0|1> [runs]   (the library's streamed decode alone, for perf; see PerfControl)
//   local-benchmark promptcache <model.gguf> [runs]   (a restored 1,100-token conversation, with and without the prompt cache: "Restored conversation")
//   local-benchmark samplecost <model.gguf>   (a greedy pick and a default draw, llama.cpp's sampler vs the library's in place)
//   local-benchmark calibrate <model.gguf>[,<model.gguf>...] <llama-bench> [threads] [rounds]   (the flash-attention calibration beside llama-bench -fa 0 / -fa 1: "Attention at depth")
//   local-benchmark download <model.gguf> [rounds]   (the file from the loopback CDN: ModelDownload beside curl -o, then a resume after a cut at 40%: "Model downloads")
//   local-benchmark thinking <model.gguf> [rounds]   (streamed decode through the thought splitter beside the same weights without it: "Thinking models")
//   local-benchmark image <model.gguf> <mmproj.gguf> <llama-mtmd-cli> <image.png> [runs] [threads]   (time to first token with one image beside llama-mtmd-cli; a second turn with the image kept beside encoded again: "Images on device")
//   local-benchmark gpu <model.gguf> <llama-bench> [layers] [threads] [runs]   (layers on the GPU beside llama-bench -ngl on the same device: "GPU offload beside llama-bench")
//   local-benchmark sha256 [MiB]   (the download's SHA-256 beside sha256sum and openssl dgst on the same bytes; 256 MiB unless given)

let arguments = CommandLine.arguments

func peakResidentMegabytes() -> Double {
  var usage = rusage()
  getrusage(RUSAGE_SELF.rawValue, &usage)
  return Double(usage.ru_maxrss) / 1024
}

do {
  // The one command that needs no model: its only argument is optional.
  if arguments.count >= 2, arguments[1] == "sha256" {
    let mebibytes = arguments.count > 2 ? Int(arguments[2]) ?? 256 : 256
    try SHA256Throughput.run(mebibytes: max(1, mebibytes))
    exit(0)
  }
  guard arguments.count >= 3 else {
    throw BenchmarkError("usage: local-benchmark throughput|multiturn|memory <model> ...")
  }
  let path = arguments[2]
  switch arguments[1] {
  case "render":
    let figures = try await ChatTemplateBenchmark.run(modelPath: path, turns: 50, iterations: 501)
    print(
      String(
        format:
          "50-turn conversation on the model's own template: render %.3f ms (median of 501; the engine alone %.3f ms), parse %.3f ms once, %d characters, %@",
        figures.renderMilliseconds, figures.engineMilliseconds, figures.parseMilliseconds, figures.promptCharacters,
        figures.usedModelTemplate ? "model template" : "FALLBACK"))
  case "throughput":
    guard arguments.count >= 4 else { throw BenchmarkError("throughput needs the llama-bench path") }
    let threads = arguments.count > 4 ? Int(arguments[4]) ?? 2 : 2
    let batch = arguments.count > 5 ? Int(arguments[5]) ?? 512 : 512
    let runs = arguments.count > 6 ? Int(arguments[6]) ?? 7 : 7
    // llama-bench sizes its context to the test (512 + 128); llama.cpp rounds to 768.
    let model = LocalSystemModel(modelPath: path, contextSize: 768, threads: threads, batchSize: batch)
    try await model.prepare()
    let prompt = try await LocalThroughput.prompt(of: 512, model: model)
    _ = try await LocalThroughput.decode(model: model, tokens: 8)  // warm-up
    // Interleaved with llama-bench, one repetition each, so that both see the
    // same machine: on shared cores the speed drifts from minute to minute.
    var ours = (prefill: [Double](), decode: [Double]())
    var theirs = (prefill: [Double](), decode: [Double]())
    var prefilled = 0
    var generated = 0
    var (coldTurns, warmTurns) = ([Double](), [Double]())
    let raw = try RawLlama(path: path, contextSize: 768, batchSize: batch, threads: threads)
    _ = try await ComputeLane.run(threads: threads) { raw.decode(tokens: 8) }  // warm-up
    var direct = (prefill: [Double](), decode: [Double]())
    for run in 0..<runs {
      let (prefill, prefillTokens, _) = try await LocalThroughput.prefill(model: model, prompt: prompt, run: run)
      let (decode, decodeTokens) = try await LocalThroughput.decode(model: model, tokens: 128)
      let reference = try LlamaBench.run(
        executable: arguments[3], model: path, threads: threads, batchSize: batch, repetitions: 1)
      ours.prefill.append(prefill)
      ours.decode.append(decode)
      direct.prefill.append(try await ComputeLane.run(threads: threads) { raw.prefill(tokens: 512) })
      direct.decode.append(try await ComputeLane.run(threads: threads) { raw.decode(tokens: 128) })
      theirs.prefill.append(reference.prefillTokensPerSecond)
      theirs.decode.append(reference.decodeTokensPerSecond)
      let cold = LocalSystemModel(modelPath: path, contextSize: 768, threads: threads, batchSize: batch)
      coldTurns.append(try await LocalThroughput.firstTurn(model: cold))
      warmTurns.append(try await LocalThroughput.firstTurn(model: model))
      (prefilled, generated) = (prefillTokens, decodeTokens)
    }
    let (prefill, decode) = (median(ours.prefill), median(ours.decode))
    let (referencePrefill, referenceDecode) = (median(theirs.prefill), median(theirs.decode))
    print(
      "prefill  pp\(prefilled): HybridInference \(format(prefill)) t/s, llama-bench pp512 \(format(referencePrefill)) t/s, ratio \(format(prefill / referencePrefill, 3))"
    )
    print(
      "decode   tg\(generated): HybridInference \(format(decode)) t/s, llama-bench tg128 \(format(referenceDecode)) t/s, ratio \(format(decode / referenceDecode, 3))"
    )
    print(
      "same process, llama.cpp's C API without the library: pp512 \(format(median(direct.prefill))) t/s, tg128 \(format(median(direct.decode))) t/s; library / direct: prefill \(format(prefill / median(direct.prefill), 3)), decode \(format(decode / median(direct.decode), 3))"
    )
    print(
      "a new session answering 'Hi': \(format(median(coldTurns))) ms creating its llama context, \(format(median(warmTurns))) ms taking one from the pool"
    )
  case "decode":
    guard arguments.count >= 4 else { throw BenchmarkError("decode needs the llama-bench path") }
    let threads = arguments.count > 4 ? Int(arguments[4]) ?? 2 : 2
    let runs = arguments.count > 5 ? Int(arguments[5]) ?? 7 : 7
    let model = LocalSystemModel(modelPath: path, contextSize: 768, threads: threads)
    try await model.prepare()
    let depth = try await StreamedDecode.streamed(model: model, tokens: 8).promptTokens  // warm-up
    var (streamed, responded, reference) = ([StreamedDecode.Sample](), [StreamedDecode.Sample](), [Double]())
    for _ in 0..<runs {
      reference.append(
        try LlamaBench.run(
          executable: arguments[3], model: path, threads: threads, batchSize: 512, repetitions: 1, prompt: 0,
          depth: depth
        ).decodeTokensPerSecond)
      streamed.append(try await StreamedDecode.streamed(model: model, tokens: 128))
      responded.append(try await StreamedDecode.responded(model: model, tokens: 128))
    }
    let ours = median(streamed.map(\.tokensPerSecond))
    print(
      "decode tg128 on \(StreamedDecode.cpuModel), \(threads) thread(s): session.streamResponse \(format(ours)) t/s, respond \(format(median(responded.map(\.tokensPerSecond)))) t/s, llama-bench -d \(depth) \(format(median(reference))) t/s; streamed / llama-bench \(format(ours / median(reference), 3)) (runs \(streamed.map { format($0.tokensPerSecond) }) vs \(reference.map { format($0) }))"
    )
    print(
      "context switches per token: streamed \(format(median(streamed.map(\.switchesPerToken)), 2)), respond \(format(median(responded.map(\.switchesPerToken)), 2))"
    )
  case "depth":
    guard arguments.count >= 4 else { throw BenchmarkError("depth needs the llama-bench path") }
    let threads = arguments.count > 4 ? Int(arguments[4]) ?? 2 : 2
    let runs = arguments.count > 5 ? Int(arguments[5]) ?? 3 : 3
    try await DepthBenchmark.run(modelPath: path, llamaBench: arguments[3], threads: threads, runs: runs)
  case "probe":
    guard arguments.count >= 6, let depth = Int(arguments[4]), let fa = Int(arguments[5]) else {
      throw BenchmarkError("probe needs the llama-bench path, a depth and -fa 0|1")
    }
    let runs = arguments.count > 6 ? Int(arguments[6]) ?? 5 : 5
    let threads = arguments.count > 7 ? Int(arguments[7]) ?? 2 : 2
    try await DecodeProbe.run(
      modelPath: path, llamaBench: arguments[3], depth: depth, flashAttention: fa, runs: runs, threads: threads)
  case "probe-c":
    guard arguments.count >= 5, let depth = Int(arguments[3]), let fa = Int(arguments[4]) else {
      throw BenchmarkError("probe-c needs a depth and -fa 0|1")
    }
    let runs = arguments.count > 5 ? Int(arguments[5]) ?? 20 : 20
    let tokens = arguments.count > 6 ? Int(arguments[6]) ?? 32 : 32
    try await DecodeProbe.contexts(
      modelPath: path, depth: depth, flashAttention: fa, runs: runs, threads: 2, tokens: tokens,
      only: arguments.count > 7 ? Int(arguments[7]) : nil)
  case "stream":
    guard arguments.count >= 5, let depth = Int(arguments[3]), let fa = Int(arguments[4]) else {
      throw BenchmarkError("stream needs a depth and -fa 0|1")
    }
    let runs = arguments.count > 5 ? Int(arguments[5]) ?? 5 : 5
    try await DecodeProbe.libraryOnly(modelPath: path, depth: depth, flashAttention: fa, runs: runs, threads: 2)
  case "download":
    let rounds = arguments.count > 3 ? Int(arguments[3]) ?? 7 : 7
    try await ModelDownloadBenchmark.run(modelPath: path, rounds: max(1, rounds))
  case "gpu":
    guard arguments.count >= 4 else { throw BenchmarkError("gpu needs the llama-bench path") }
    let layers = arguments.count > 4 ? Int(arguments[4]) ?? 99 : 99
    let threads = arguments.count > 5 ? Int(arguments[5]) ?? 2 : 2
    let runs = arguments.count > 6 ? Int(arguments[6]) ?? 7 : 7
    try await GPUThroughput.run(
      modelPath: path, llamaBench: arguments[3], layers: max(1, layers), threads: threads, runs: max(1, runs))
  case "thinking":
    let rounds = arguments.count > 3 ? Int(arguments[3]) ?? 7 : 7
    try await ThinkingOverhead.run(modelPath: path, rounds: max(1, rounds))
  case "promptcache":
    let runs = arguments.count > 3 ? Int(arguments[3]) ?? 3 : 3
    try await PromptCacheBenchmark.run(modelPath: path, runs: runs)
  case "concurrent":
    let threads = arguments.count > 3 ? Int(arguments[3]) ?? 2 : 2
    let runs = arguments.count > 4 ? Int(arguments[4]) ?? 3 : 3
    let attention: [String: FlashAttention] = ["on": .on, "off": .off]
    try await ConcurrentSessions.compare(
      modelPath: path, threads: threads, runs: runs,
      flashAttention: arguments.count > 5 ? attention[arguments[5]] : nil)
  case "grammar":
    let threads = arguments.count > 3 ? Int(arguments[3]) ?? 2 : 2
    let runs = arguments.count > 4 ? Int(arguments[4]) ?? 7 : 7
    let model = LocalSystemModel(modelPath: path, contextSize: 768, threads: threads)
    try await model.prepare()
    _ = try await GrammarOverhead.decode(model: model, tokens: 8, constrained: true)  // warm-up
    // Interleaved, one of each per run, so both see the same machine.
    var (free, constrained) = ([Double](), [Double]())
    var counts = (0, 0)
    for _ in 0..<runs {
      let (freeRate, freeTokens) = try await GrammarOverhead.decode(model: model, tokens: 128, constrained: false)
      let (rate, tokens) = try await GrammarOverhead.decode(model: model, tokens: 128, constrained: true)
      free.append(freeRate)
      constrained.append(rate)
      counts = (freeTokens, tokens)
    }
    let (freeMedian, constrainedMedian) = (median(free), median(constrained))
    print(
      "decode, greedy, same prompt: unconstrained \(format(freeMedian)) t/s (\(counts.0) tokens), constrained by a JSON Schema grammar \(format(constrainedMedian)) t/s (\(counts.1) tokens)"
    )
    print(
      "constrained / unconstrained: \(format(constrainedMedian / freeMedian, 3)); grammar cost \(format((1 - constrainedMedian / freeMedian) * 100)) % (target < 15 %)"
    )
  case "calibrate":
    guard arguments.count >= 4 else { throw BenchmarkError("calibrate needs the llama-bench path") }
    let threads = arguments.count > 4 ? Int(arguments[4]) ?? 2 : 2
    let rounds = arguments.count > 5 ? Int(arguments[5]) ?? 3 : 3
    try await AttentionCalibrationCheck.run(
      modelPaths: path.split(separator: ",").map(String.init), llamaBench: arguments[3], threads: threads,
      rounds: rounds)
  case "multiturn":
    let model = LocalSystemModel(modelPath: path, contextSize: 4096)
    try await model.prepare()
    let reused = try await MultiTurn.withReuse(model: model)
    let fresh = try await MultiTurn.withoutReuse(model: model)
    for (turn, (withCache, withoutCache)) in zip(reused, fresh).enumerated() {
      print(
        "turn \(turn + 1): ttft with KV reuse \(format(withCache * 1000)) ms, without \(format(withoutCache * 1000)) ms"
      )
    }
    if let first = reused.first, let last = reused.last {
      print(
        "turn 8 / turn 1 with reuse: \(format(last / first, 2)); without reuse: \(format((fresh.last ?? 0) / (fresh.first ?? 1), 2))"
      )
    }
  case "image":
    guard arguments.count >= 6 else { throw BenchmarkError("image needs the projector, llama-mtmd-cli and an image") }
    let runs = arguments.count > 6 ? Int(arguments[6]) ?? 5 : 5
    let threads = arguments.count > 7 ? Int(arguments[7]) ?? 2 : 2
    let figures = try await ImageFirstToken.measure(
      model: path, projector: arguments[3], cli: arguments[4], image: arguments[5], runs: max(1, runs),
      threads: threads)
    print(
      "image first token, median of \(runs), \(threads) thread(s): HybridInference \(format(figures.library * 1000, 2)) ms, "
        + "llama-mtmd-cli \(format(figures.cli * 1000, 2)) ms (its encode + prompt eval \(format(figures.cliEncode * 1000, 2)) ms); "
        + "ratio \(format(figures.library / figures.cli, 3))")
    print(
      "second turn first token: image kept \(format(figures.kept * 1000, 2)) ms, encoded again \(format(figures.encodedAgain * 1000, 2)) ms; "
        + "speedup \(format(figures.encodedAgain / figures.kept, 2))x")
  case "cancel":
    let model = LocalSystemModel(modelPath: path, contextSize: 4096)
    try await model.prepare()
    let (decode, prefill, probe) = try await Cancellation.measure(model: model, runs: 5)
    print(
      "cancel → a one-token probe on the same session answered: during decode \(format(decode)) ms, "
        + "during a 3,000-token prefill \(format(prefill)) ms; the probe alone on an idle session \(format(probe)) ms"
    )
  case "samplecost":
    let raw = try RawLlama(
      path: path, setup: .init(contextSize: 512, batchSize: 512, threads: 2, flashAttention: 0, asLibrary: true))
    for _ in 0..<3 {
      let cost = raw.greedyCost(repetitions: 2000)
      print(
        "CPU: \(StreamedDecode.cpuModel); greedy pick per token: llama_sampler_sample \(format(cost.chain * 1e6, 1)) µs, "
          + "the library's (GreedyPick) \(format(cost.inPlace * 1e6, 1)) µs, same token: \(cost.same)")
      let random = try raw.topKCost(repetitions: 2000)
      print(
        "CPU: \(StreamedDecode.cpuModel); default chain (top-k 40, top-p 0.95, temperature 0.8) per token: "
          + "llama_sampler_sample \(format(random.chain * 1e6, 1)) µs, the library's (TopKPick) "
          + "\(format(random.inPlace * 1e6, 1)) µs, same tokens: \(random.same)")
    }
  case "memory":
    let sessions = arguments.count > 3 ? Int(arguments[3]) ?? 1 : 1
    let model = LocalSystemModel(modelPath: path, contextSize: 4096)
    try await model.prepare()
    let options = HybridGenerationOptions.foundationModels(
      GenerationOptions(sampling: .greedy, maximumResponseTokens: 16))
    let open = (0..<sessions).map { _ in GenerativeModelSession(model: model, logHandler: .silent) }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for session in open { group.addTask { _ = try await session.respond(to: "Hello!", options: options) } }
      try await group.waitForAll()
    }
    print("peak RSS with \(sessions) session(s): \(format(peakResidentMegabytes())) MiB")
    withExtendedLifetime(open) {}
  default:
    throw BenchmarkError("unknown benchmark \(arguments[1])")
  }
} catch {
  FileHandle.standardError.write(Data("local-benchmark: error: \(error)\n".utf8))
  exit(1)
}
