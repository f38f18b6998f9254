import CLlama
import Foundation

/// llama.cpp's own decode loop, written against its C API inside this process:
/// what `llama-bench` does for pp512 and tg128, with the same model, context
/// size, batch and threads as the library. Beside the library in the same
/// process, it isolates the library's own cost from machine drift.
///
/// `@unchecked Sendable`: the benchmark calls it from one task at a time, each
/// call on the library's compute lane (`ComputeLane.run`) so that the process
/// keeps one OpenMP team.
final class RawLlama: @unchecked Sendable {
  private let model: OpaquePointer
  private let context: OpaquePointer
  private let vocabSize: Int32

  init(path: String, contextSize: Int, batchSize: Int, threads: Int) throws {
    llama_backend_init()
    guard let model = llama_model_load_from_file(path, llama_model_default_params()) else {
      throw BenchmarkError("llama.cpp could not load \(path)")
    }
    var params = llama_context_default_params()
    params.n_ctx = UInt32(contextSize)
    params.n_batch = UInt32(batchSize)
    params.n_ubatch = UInt32(batchSize)
    params.n_threads = Int32(threads)
    params.n_threads_batch = Int32(threads)
    guard let context = llama_init_from_model(model, params) else {
      llama_model_free(model)
      throw BenchmarkError("llama.cpp could not create a context")
    }
    self.model = model
    self.context = context
    self.vocabSize = llama_vocab_n_tokens(llama_model_get_vocab(model))
  }

  deinit {
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

  /// Generated tokens per second: one token per decode, no sampling.
  func decode(tokens count: Int) -> Double {
    llama_memory_clear(llama_get_memory(context), true)
    var token = Int32.random(in: 0..<vocabSize)
    let start = ContinuousClock.now
    for _ in 0..<count {
      _ = llama_decode(context, llama_batch_get_one(&token, 1))
      llama_synchronize(context)
      token = Int32.random(in: 0..<vocabSize)
    }
    return Double(count) / (ContinuousClock.now - start).seconds
  }
}
