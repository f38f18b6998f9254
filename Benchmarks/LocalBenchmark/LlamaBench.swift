import Foundation

/// Runs llama.cpp's own `llama-bench` on the same model, threads and batch size.
enum LlamaBench {
  struct Figures {
    var prefillTokensPerSecond: Double
    var decodeTokensPerSecond: Double
  }

  /// llama-bench's pp512 and tg128 (`prompt: 0` for tg128 alone), with
  /// llama.cpp's defaults otherwise (weights repacked, as in the library).
  /// `depth` tokens are in the KV cache before the test (`-d`): a decode
  /// after a prompt attends to it, and attention is a tenth of a token's time.
  /// `flashAttention` is `-fa` (0 or 1; nil leaves llama-bench's default);
  /// `gpuLayers` is `-ngl` (llama-bench's own default is 99: all of them on a
  /// GPU build, which the library's CPU figures are not).
  static func run(
    executable: String, model: String, threads: Int, batchSize: Int, repetitions: Int, prompt: Int = 512,
    generate: Int = 128, depth: Int = 0, flashAttention: Int? = nil, hugePages: Bool = false, gpuLayers: Int = 0
  ) throws -> Figures {
    let runs = try runJSON(
      executable: executable,
      arguments: [
        "-m", model, "-p", "\(prompt)", "-n", "\(generate)", "-t", "\(threads)", "-b", "\(batchSize)",
        "-ub", "\(batchSize)", "-r", "\(repetitions)", "-d", "\(depth)", "-o", "json",
        "-ngl", "\(gpuLayers)",
      ] + (flashAttention.map { ["-fa", "\($0)"] } ?? []) + (hugePages ? ["-lm", "none"] : []),
      environment: hugePages ? ["GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"] : [:])
    var figures = Figures(prefillTokensPerSecond: .nan, decodeTokensPerSecond: .nan)
    for run in runs {
      // llama-bench reports each repetition; take the median like our own figures.
      let samples = (run["samples_ts"] as? [Double]) ?? [(run["avg_ts"] as? Double) ?? .nan]
      if (run["n_prompt"] as? Int ?? 0) > 0 { figures.prefillTokensPerSecond = median(samples) }
      if (run["n_gen"] as? Int ?? 0) > 0 { figures.decodeTokensPerSecond = median(samples) }
    }
    return figures
  }
}

extension LlamaBench {
  /// llama-bench with `-fa 0,1`: both settings in one process, one
  /// repetition each (after llama-bench's own warm-up), so that they see the
  /// same minute of the machine; `depth` tokens in the KV cache first;
  /// `-fa last` second (llama-bench runs a list in its order).
  static func runBoth(
    executable: String, model: String, threads: Int, batchSize: Int, prompt: Int, generate: Int, depth: Int = 0,
    last: Int = 1
  ) throws -> (off: Figures, on: Figures) {
    let runs = try runJSON(
      executable: executable,
      arguments: [
        "-m", model, "-p", "\(prompt)", "-n", "\(generate)", "-t", "\(threads)", "-b", "\(batchSize)",
        "-ub", "\(batchSize)", "-r", "1", "-d", "\(depth)", "-fa", last == 0 ? "1,0" : "0,1", "-o", "json",
      ])
    var both = [Figures](repeating: Figures(prefillTokensPerSecond: .nan, decodeTokensPerSecond: .nan), count: 2)
    for run in runs {
      let flag = (run["flash_attn"] as? Int) ?? ((run["flash_attn"] as? Bool) == true ? 1 : 0)
      guard flag == 0 || flag == 1 else { continue }
      let rate = median((run["samples_ts"] as? [Double]) ?? [(run["avg_ts"] as? Double) ?? .nan])
      if (run["n_prompt"] as? Int ?? 0) > 0 { both[flag].prefillTokensPerSecond = rate }
      if (run["n_gen"] as? Int ?? 0) > 0 { both[flag].decodeTokensPerSecond = rate }
    }
    return (both[0], both[1])
  }
}

struct BenchmarkError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

extension LlamaBench {
  /// Runs llama-bench with `arguments` (which ask for `-o json`) and returns
  /// its runs, one object per test.
  /// llama-bench's JSON; `environment` is added to this process's own.
  static func runJSON(
    executable: String, arguments: [String], environment: [String: String] = [:]
  ) throws -> [[String: Any]] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if !environment.isEmpty {
      process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0,
      let runs = try JSONSerialization.jsonObject(with: data) as? [[String: Any]]
    else { throw BenchmarkError("llama-bench failed (status \(process.terminationStatus))") }
    return runs
  }
}
