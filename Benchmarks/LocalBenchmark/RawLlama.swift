import CLlama
import Foundation
import HybridInferenceLlama

/// llama.cpp's own decode loop, written against its C API inside this process:
/// what `llama-bench` does for pp512 and tg128, with the same model, context
/// size, batch and threads as the library. Beside the library in the same
/// process, it isolates the library's own cost from machine drift.
///
/// `@unchecked Sendable`: the benchmark calls it from one task at a time, each
/// call on the library's compute lane (`ComputeLane.run`) so that the process
/// keeps one OpenMP team.
final class RawLlama: @unchecked Sendable {
  /// How the context is made: llama-bench's way (a context the size of the
  /// test) or the library's (`BatchedContext.makeContext`).
  struct Setup {
    var contextSize: Int
    var batchSize: Int
    var threads: Int
    /// `-fa`: 0 off, 1 on, nil llama.cpp's default (auto).
    var flashAttention: Int?
    /// The library's extra settings: one stream per sequence, no perf counters.
    var asLibrary = false
  }

  private let model: OpaquePointer
  private let context: OpaquePointer
  private let vocabSize: Int32
  private let sampler: UnsafeMutablePointer<llama_sampler>?
  private let batchSize: Int

  convenience init(path: String, contextSize: Int, batchSize: Int, threads: Int) throws {
    try self.init(path: path, setup: Setup(contextSize: contextSize, batchSize: batchSize, threads: threads))
  }

  init(path: String, setup: Setup) throws {
    llama_backend_init()
    guard let model = llama_model_load_from_file(path, llama_model_default_params()) else {
      throw BenchmarkError("llama.cpp could not load \(path)")
    }
    var params = llama_context_default_params()
    params.n_ctx = UInt32(setup.contextSize)
    params.n_batch = UInt32(setup.batchSize)
    params.n_ubatch = UInt32(setup.batchSize)
    params.n_threads = Int32(setup.threads)
    params.n_threads_batch = Int32(setup.threads)
    if let fa = setup.flashAttention {
      params.flash_attn_type = fa == 1 ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED
    }
    if setup.asLibrary {
      params.n_seq_max = 1
      params.kv_unified = false
      params.no_perf = true
    }
    guard let context = llama_init_from_model(model, params) else {
      llama_model_free(model)
      throw BenchmarkError("llama.cpp could not create a context")
    }
    self.model = model
    self.context = context
    self.vocabSize = llama_vocab_n_tokens(llama_model_get_vocab(model))
    self.batchSize = setup.batchSize
    var chain = llama_sampler_chain_default_params()
    chain.no_perf = true
    sampler = llama_sampler_chain_init(chain)
    if let sampler { llama_sampler_chain_add(sampler, llama_sampler_init_greedy()) }
  }

  deinit {
    if let sampler { llama_sampler_free(sampler) }
    llama_free(context)
    llama_model_free(model)
  }

  /// Prompt tokens per second for one batch of `tokens` random tokens.
  func prefill(tokens count: Int) -> Double {
    llama_memory_clear(llama_get_memory(context), true)
    var tokens = (0..<count).map { _ in Int32.random(in: 0..<vocabSize) }
    let start = ContinuousClock.now
    _ = tokens.withUnsafeMutableBufferPointer { buffer in
      llama_decode(context, llama_batch_get_one(buffer.baseAddress, Int32(count)))
    }
    llama_synchronize(context)
    return Double(count) / (ContinuousClock.now - start).seconds
  }

  /// Generated tokens per second: one token per decode, after `depth` random
  /// tokens in the KV cache (llama-bench's `-d`, decoded in batches, untimed).
  /// `sampled`: each next token is the greedy sampler's pick from the logits
  /// (as the library does), else a random one (as llama-bench does).
  func decode(tokens count: Int, depth: Int = 0, sampled: Bool = false) -> Double {
    fill(depth: depth)
    return decodeAtDepth(tokens: count, sampled: sampled)
  }

  /// Clears the KV cache and puts `depth` random tokens in it.
  func fill(depth: Int) {
    llama_memory_clear(llama_get_memory(context), true)
    var filled = 0
    while filled < depth {
      let chunk = min(batchSize, depth - filled)
      var tokens = (0..<chunk).map { _ in Int32.random(in: 0..<vocabSize) }
      _ = tokens.withUnsafeMutableBufferPointer { buffer in
        llama_decode(context, llama_batch_get_one(buffer.baseAddress, Int32(chunk)))
      }
      filled += chunk
    }
    llama_synchronize(context)
    self.depth = depth
  }

  private var depth = 0

  /// Decodes `count` tokens after what `fill` left, then takes them out of
  /// the cache again, so that the next call starts at the same depth.
  func decodeAtDepth(tokens count: Int, sampled: Bool) -> Double {
    var token = Int32.random(in: 0..<vocabSize)
    PerfControl.enable()
    defer { PerfControl.disable() }
    let start = ContinuousClock.now
    for _ in 0..<count {
      _ = llama_decode(context, llama_batch_get_one(&token, 1))
      llama_synchronize(context)
      if sampled, let sampler {
        token = llama_sampler_sample(sampler, context, -1)
      } else {
        token = Int32.random(in: 0..<vocabSize)
      }
    }
    let rate = Double(count) / (ContinuousClock.now - start).seconds
    _ = llama_memory_seq_rm(llama_get_memory(context), 0, llama_pos(depth), -1)
    return rate
  }
}

extension RawLlama {
  /// Logits to sample from: one token decoded 100 deep.
  private func decodeOneStep() {
    fill(depth: 100)
    var token: Int32 = 42
    _ = llama_decode(context, llama_batch_get_one(&token, 1))
    llama_synchronize(context)
  }

  /// Seconds per greedy pick from one step's logits, llama.cpp's greedy
  /// sampler (`llama_sampler_sample`, which copies every logit into a
  /// candidate array first) beside the library's (`GreedyPick`, in place),
  /// and whether the two picked the same token.
  func greedyCost(repetitions: Int) -> (chain: Double, inPlace: Double, same: Bool) {
    decodeOneStep()
    var (slow, fast): (Int32, Int?) = (-1, nil)
    var start = ContinuousClock.now
    for _ in 0..<repetitions { if let sampler { slow = llama_sampler_sample(sampler, context, -1) } }
    let chain = (ContinuousClock.now - start).seconds / Double(repetitions)
    start = ContinuousClock.now
    for _ in 0..<repetitions {
      guard let logits = llama_get_logits_ith(context, -1) else { break }
      fast = GreedyPick.index(in: UnsafeBufferPointer(start: logits, count: Int(vocabSize)))
    }
    let inPlace = (ContinuousClock.now - start).seconds / Double(repetitions)
    return (chain, inPlace, fast == Int(slow))
  }

  /// Seconds per draw with the library's default chain (top-k 40, top-p
  /// 0.95, temperature 0.8, a seeded draw) from one step's logits: the whole
  /// vocabulary through `llama_sampler_sample`, beside the 40 largest through
  /// `TopKPick` on a second chain of the same seed; and whether every draw
  /// was the same token.
  func topKCost(repetitions: Int) throws -> (chain: Double, inPlace: Double, same: Bool) {
    let chains = (0..<2).compactMap { _ -> UnsafeMutablePointer<llama_sampler>? in
      guard let chain = llama_sampler_chain_init(llama_sampler_chain_default_params()) else { return nil }
      for sampler in [
        llama_sampler_init_top_k(40), llama_sampler_init_top_p(0.95, 1), llama_sampler_init_temp(0.8),
        llama_sampler_init_dist(42),
      ] {
        llama_sampler_chain_add(chain, sampler)
      }
      return chain
    }
    defer { chains.forEach { llama_sampler_free($0) } }
    guard chains.count == 2 else { throw BenchmarkError("llama.cpp could not create a sampler") }
    decodeOneStep()
    var start = ContinuousClock.now
    let whole = (0..<repetitions).map { _ in llama_sampler_sample(chains[0], context, -1) }
    let chain = (ContinuousClock.now - start).seconds / Double(repetitions)
    var buffer: [llama_token_data] = []
    start = ContinuousClock.now
    let short = try (0..<repetitions).map { _ -> llama_token? in
      guard let logits = llama_get_logits_ith(context, -1) else { return nil }
      return try TopKPick.sample(
        chain: chains[1], logits: UnsafeBufferPointer(start: logits, count: Int(vocabSize)), count: 40, buffer: &buffer)
    }
    let inPlace = (ContinuousClock.now - start).seconds / Double(repetitions)
    return (chain, inPlace, short == whole.map { Optional($0) })
  }
}
