import CLlama
import Foundation
import HybridInferenceCore

/// Times the attention of one decode step both ways, on ggml's CPU backend,
/// with a loaded model's shapes: how `FlashAttention.automatic` measures a
/// model whose whole steps are too slow or too large to time
/// (`AttentionStepCalibration`). Its cost does not grow with the weights;
/// on 2 threads it can overstate the fused kernel's cost, calling it dearer
/// where the whole step is faster with it, so whole steps come first.
///
/// Only attention differs between the two settings (the weights' matrix
/// products are the same graph either way), so only attention is timed: a
/// graph of one attention block per layer, each reading K and V tensors of its
/// own (the real cache footprint, in the context's KV type), a query of one
/// token, the mask llama.cpp builds, and the store of the new token's K and
/// V into the cache (without flash attention V is transposed, so that store
/// is one scattered element per head dimension: a cache miss each, which the
/// attention ops alone would not show). The two graphs mirror llama.cpp's
/// `build_attn_mha` and `llama_kv_cache::get_k`/`get_v`:
/// - off: V stored transposed (llama.cpp's layout without flash attention),
///   `mul_mat(K, Q)`, `soft_max_ext` with the f32 mask and the scale,
///   `mul_mat(V, KQ)`, permute, `cont_2d`;
/// - on: V as stored, `flash_attn_ext` with the f16 mask, f32 accumulation.
/// Grouped-query heads broadcast as llama.cpp's do (the K/V views have
/// `n_head_kv` heads, the query `n_head`). The cells one step reads are
/// llama.cpp's: the depth plus the new token, padded to 256, the padding
/// masked out.
///
/// Allocations are bounded whatever the GGUF header says: shapes are checked
/// first (`Shape.init`), and when the K/V tensors of every layer would pass
/// `maximumCacheBytes`, or there are more than `maximumTimedLayers`, only as
/// many layers are timed as fit, and the times are scaled to the model's
/// layer count.
struct AttentionCalibrationGraph {
  /// The most bytes of K/V tensors allocated: 256 MiB (more than any last-level
  /// cache, so a deep cache is still read from memory as it is in a real step).
  static let maximumCacheBytes = 256 << 20
  /// The most layers one graph holds: 128 (more than the deepest common
  /// models), so a crafted layer count cannot make the graphs, or the time
  /// they take, grow without bound.
  static let maximumTimedLayers = 128
  /// Repetitions of each (depth, setting) cell after one untimed warm-up: 5,
  /// each paired with the other setting's (`AttentionCalibration.decide`).
  static let repetitions = 5

  /// The attention shape of a model, checked.
  struct Shape: Sendable, Equatable, CustomStringConvertible {
    var layers: Int
    var heads: Int
    var kvHeads: Int
    var headSize: Int
    /// `ggml_type` of the K and V cache cells.
    var kvType: ggml_type

    /// Nil when the numbers are not a shape ggml's attention accepts (a
    /// crafted header): no heads, heads that do not group, a head wider than
    /// 1,024 or more than 4,096 layers.
    init?(layers: Int, heads: Int, kvHeads: Int, headSize: Int, kvType: ggml_type) {
      guard (1...4096).contains(layers), (1...4096).contains(heads), (1...heads).contains(kvHeads),
        heads % kvHeads == 0, (1...1024).contains(headSize), ggml_blck_size(kvType) == 1
      else { return nil }
      (self.layers, self.heads, self.kvHeads, self.headSize, self.kvType) = (layers, heads, kvHeads, headSize, kvType)
    }

    /// The shape of `model`'s attention in a context of llama.cpp's default
    /// KV types (as `BatchedContext.makeContext` makes it); nil as above, or
    /// when K and V are of different types.
    init?(model: LlamaModel) {
      let params = llama_context_default_params()
      guard params.type_k == params.type_v else { return nil }
      self.init(
        layers: Int(llama_model_n_layer(model.pointer)), heads: Int(llama_model_n_head(model.pointer)),
        kvHeads: Int(llama_model_n_head_kv(model.pointer)), headSize: model.attentionHeadSize ?? 0,
        kvType: params.type_k)
    }

    var description: String {
      "\(layers) layers, \(heads) heads (\(kvHeads) KV) \(headSize) wide, KV \(String(cString: ggml_type_name(kvType)))"
    }
  }

  /// Times `shape`'s attention at each of `depths` (tokens already in the
  /// cache), both ways, on `threads` threads; the calling thread must be a
  /// compute lane (`ComputeLanes`), so that ggml's OpenMP team is the lane's.
  ///
  /// Before each computation `evictBytes` of scratch memory are written
  /// (untimed): in a real decode step the weights stream through the caches
  /// between one step's read of a layer's K/V and the next, so K/V come from
  /// memory, while back-to-back graphs of attention alone would find the
  /// whole cache in L3 (a small model's K/V at 1,024 tokens fits a 32 MiB L3)
  /// and time another regime.
  static func measure(
    shape: Shape, depths: [Int], threads: Int, evictBytes: Int = 0
  ) -> Result<AttentionCalibration.Timings, AttentionCalibration.Failure> {
    let cellsPerStep = depths.map { cells(atDepth: $0) }
    guard let kvSize = cellsPerStep.max(), !depths.isEmpty, depths.allSatisfy({ $0 >= 0 && $0 < 1 << 20 }) else {
      return .failure(AttentionCalibration.Failure(reason: "no depth to measure"))
    }
    let rowBytes = ggml_row_size(shape.kvType, Int64(shape.headSize * shape.kvHeads))
    let layerBytes = 2 * rowBytes * kvSize
    guard layerBytes <= maximumCacheBytes else {
      return .failure(
        AttentionCalibration.Failure(reason: "one layer's K/V of \(kvSize) cells is \(layerBytes >> 20) MiB"))
    }
    let timedLayers = min(shape.layers, maximumTimedLayers, maximumCacheBytes / layerBytes)
    // ggml work like a load or a generation: an exit waits for it (and it
    // stops at the next computation), so ggml's statics are not destroyed
    // under it (ExitDuringWorkTests).
    LlamaBackend.inFlight.enter()
    defer { LlamaBackend.inFlight.leave() }
    guard !LlamaBackend.inFlight.isStopping else {
      return .failure(AttentionCalibration.Failure(reason: "the process is exiting"))
    }
    guard let backend = ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, nil) else {
      return .failure(AttentionCalibration.Failure(reason: "ggml has no CPU backend"))
    }
    defer { ggml_backend_free(backend) }
    setThreads(threads, of: backend)
    var session = Session(shape: shape, layers: timedLayers, kvSize: kvSize, backend: backend)
    defer { session.free() }
    do throws(AttentionCalibration.Failure) {
      try session.allocateCache()
      var result = AttentionCalibration.Timings(layers: shape.layers, timedLayers: timedLayers)
      var graphs: [(depth: Int, off: Graph, on: Graph)] = []
      defer {
        for entry in graphs {
          entry.off.free()
          entry.on.free()
        }
      }
      for depth in depths {
        let off = try session.graph(depth: depth, flash: false)
        graphs.append((depth, off, try session.graph(depth: depth, flash: true)))
      }
      let scale = Double(shape.layers) / Double(timedLayers)
      let scratchBytes = min(max(0, evictBytes), maximumEvictBytes)
      // A backend buffer, cleared through ggml: a write the compiler cannot drop.
      let scratch = scratchBytes > 0 ? ggml_backend_alloc_buffer(backend, scratchBytes) : nil
      defer { if let scratch { ggml_backend_buffer_free(scratch) } }
      var cells = graphs.map { AttentionCalibration.Cell(depth: $0.depth) }
      let start = DispatchTime.now().uptimeNanoseconds
      for round in 0...repetitions {
        // Busy cores stretch every computation: past the budget, the rounds done decide.
        if round > 1, Double(DispatchTime.now().uptimeNanoseconds &- start) / 1e9 > timeBudget { break }
        for (index, entry) in graphs.enumerated() {
          // Alternating which goes first, so a slow moment does not always fall on one setting.
          let order = (round + index).isMultiple(of: 2) ? [false, true] : [true, false]
          for flash in order {
            if LlamaBackend.inFlight.isStopping { throw AttentionCalibration.Failure(reason: "the process is exiting") }
            if let scratch { ggml_backend_buffer_clear(scratch, UInt8(truncatingIfNeeded: round &+ 1)) }
            let seconds = try (flash ? entry.on : entry.off).compute(on: backend) * scale
            if round == 0 { continue }
            if flash { cells[index].on.append(seconds) } else { cells[index].off.append(seconds) }
          }
        }
      }
      result.cells = cells
      return .success(result)
    } catch {
      return .failure(error)
    }
  }

  /// Seconds after which no further round of repetitions starts (one timed
  /// round always runs): on cores busy with other work the calibration ran
  /// 8 s for Gemma 3 270M, where 0.1-0.2 s is usual.
  static let timeBudget = 0.5

  /// The most scratch bytes written before a computation: 128 MiB.
  static let maximumEvictBytes = 128 << 20

  /// Bytes to write between computations so that K/V are read from memory as
  /// in a real step: the last-level cache (from sysfs, else 32 MiB), or the
  /// model's weights when those are smaller (they all stay cached then).
  static func evictBytes(modelBytes: Int) -> Int {
    let text = KernelFile.read("/sys/devices/system/cpu/cpu0/cache/index3/size")
    let trimmed = text?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    let cache: Int
    if trimmed.hasSuffix("K"), let kib = Int(trimmed.dropLast()), kib > 0, kib < 1 << 20 {
      cache = kib << 10
    } else {
      cache = 32 << 20
    }
    return min(max(0, modelBytes), cache, maximumEvictBytes)
  }

  /// The cells one decode step at `depth` reads: the depth plus the new token,
  /// padded to 256 (`llama_kv_cache::get_n_kv`).
  static func cells(atDepth depth: Int) -> Int {
    max(256, (depth + 1 + 255) / 256 * 256)
  }

  /// The CPU backend's thread count, through the registry (ggml-cpu's own
  /// function lives in a library the package does not link).
  private static func setThreads(_ threads: Int, of backend: ggml_backend_t) {
    guard let device = ggml_backend_get_device(backend), let registry = ggml_backend_dev_backend_reg(device),
      let address = ggml_backend_reg_get_proc_address(registry, "ggml_backend_set_n_threads")
    else { return }
    let setter = unsafeBitCast(address, to: ggml_backend_set_n_threads_t.self)
    setter(backend, Int32(clamping: threads))
  }

  /// The K/V tensors and their buffer, made once and read by every graph.
  private struct Session {
    let shape: Shape
    let layers: Int
    let kvSize: Int
    let backend: ggml_backend_t
    var context: OpaquePointer?
    var buffer: ggml_backend_buffer_t?
    var keys: [UnsafeMutablePointer<ggml_tensor>] = []
    var values: [UnsafeMutablePointer<ggml_tensor>] = []

    init(shape: Shape, layers: Int, kvSize: Int, backend: ggml_backend_t) {
      (self.shape, self.layers, self.kvSize, self.backend) = (shape, layers, kvSize, backend)
    }

    mutating func allocateCache() throws(AttentionCalibration.Failure) {
      let params = ggml_init_params(
        mem_size: ggml_tensor_overhead() * (2 * layers + 8), mem_buffer: nil, no_alloc: true)
      guard let context = ggml_init(params) else { throw AttentionCalibration.Failure(reason: "ggml_init failed") }
      self.context = context
      let width = Int64(shape.headSize * shape.kvHeads)
      for _ in 0..<layers {
        guard let key = ggml_new_tensor_2d(context, shape.kvType, width, Int64(kvSize)),
          let value = ggml_new_tensor_2d(context, shape.kvType, width, Int64(kvSize))
        else { throw AttentionCalibration.Failure(reason: "ggml could not describe the K/V tensors") }
        keys.append(key)
        values.append(value)
      }
      guard let buffer = ggml_backend_alloc_ctx_tensors(context, backend) else {
        throw AttentionCalibration.Failure(reason: "the K/V tensors could not be allocated")
      }
      self.buffer = buffer
      // Small finite values (0x2C2C is 0.0645 in f16), the same in every cell.
      ggml_backend_buffer_clear(buffer, 0x2C)
    }

    /// One decode step's attention at `depth`, allocated and ready to compute.
    func graph(depth: Int, flash: Bool) throws(AttentionCalibration.Failure) -> Graph {
      let cells = AttentionCalibrationGraph.cells(atDepth: depth)
      let nodes = max(Int(GGML_DEFAULT_GRAPH_SIZE), 24 * layers)
      let params = ggml_init_params(
        mem_size: ggml_tensor_overhead() * (24 * layers + 16) + ggml_graph_overhead_custom(nodes, false),
        mem_buffer: nil, no_alloc: true)
      let inputParams = ggml_init_params(mem_size: ggml_tensor_overhead() * 8, mem_buffer: nil, no_alloc: true)
      guard let context = ggml_init(params) else { throw AttentionCalibration.Failure(reason: "ggml_init failed") }
      guard let inputs = ggml_init(inputParams) else {
        ggml_free(context)
        throw AttentionCalibration.Failure(reason: "ggml_init failed")
      }
      var made = Graph(context: context, inputs: inputs)
      do throws(AttentionCalibration.Failure) {
        try made.build(session: self, cells: cells, valid: depth + 1, flash: flash, nodes: nodes)
      } catch {
        made.free()
        throw error
      }
      return made
    }

    func free() {
      if let buffer { ggml_backend_buffer_free(buffer) }
      if let context { ggml_free(context) }
    }
  }

  /// One graph: its tensor context, its allocator (which holds the
  /// intermediate tensors' memory) and the graph, and its inputs in a buffer
  /// of their own: the allocator may reuse an input's memory for a later
  /// node once it is read, and the inputs are set once for every computation.
  private struct Graph {
    let context: OpaquePointer
    let inputs: OpaquePointer
    var inputBuffer: ggml_backend_buffer_t? = nil
    var allocator: ggml_gallocr_t? = nil
    var graph: OpaquePointer? = nil

    mutating func build(session: Session, cells: Int, valid: Int, flash: Bool, nodes: Int) throws(AttentionCalibration
      .Failure)
    {
      let shape = session.shape
      let head = Int64(shape.headSize)
      let row = ggml_row_size(shape.kvType, head)
      let gqaRow = ggml_row_size(shape.kvType, head * Int64(shape.kvHeads))
      let element = ggml_row_size(shape.kvType, 1)
      let width = head * Int64(shape.kvHeads)
      guard let graph = ggml_new_graph_custom(context, nodes, false),
        let query = ggml_new_tensor_3d(inputs, GGML_TYPE_F32, head, Int64(shape.heads), 1),
        let mask = ggml_new_tensor_4d(inputs, flash ? GGML_TYPE_F16 : GGML_TYPE_F32, Int64(cells), 1, 1, 1),
        let newKey = ggml_new_tensor_2d(inputs, GGML_TYPE_F32, width, 1),
        let newValue = ggml_new_tensor_2d(inputs, GGML_TYPE_F32, flash ? width : 1, flash ? 1 : width),
        let keyIndex = ggml_new_tensor_1d(inputs, GGML_TYPE_I64, 1),
        let valueIndices = ggml_new_tensor_1d(inputs, GGML_TYPE_I64, flash ? 1 : width)
      else { throw AttentionCalibration.Failure(reason: "ggml could not describe the graph") }
      for input in [query, mask, newKey, newValue, keyIndex, valueIndices] { ggml_set_input(input) }
      guard let inputBuffer = ggml_backend_alloc_ctx_tensors(inputs, session.backend) else {
        throw AttentionCalibration.Failure(reason: "the graph's inputs could not be allocated")
      }
      self.inputBuffer = inputBuffer
      let scale = 1 / Float(shape.headSize).squareRoot()
      for layer in 0..<session.layers {
        // The new token's K and V stored first, as `llama_kv_cache::cpy_k` and
        // `cpy_v` do: a row of K; V a row too with flash attention, else one
        // element per head dimension, `kvSize` cells apart (the transposed cache).
        let valueCache =
          flash
          ? session.values[layer]
          : ggml_reshape_2d(context, session.values[layer], 1, ggml_nelements(session.values[layer]))
        ggml_build_forward_expand(graph, ggml_set_rows(context, session.keys[layer], newKey, keyIndex))
        ggml_build_forward_expand(graph, ggml_set_rows(context, valueCache, newValue, valueIndices))
        let q = ggml_permute(context, query, 0, 2, 1, 3)
        let k = ggml_permute(
          context,
          ggml_view_4d(
            context, session.keys[layer], head, Int64(shape.kvHeads), Int64(cells), 1, row, gqaRow,
            gqaRow * session.kvSize, 0), 0, 2, 1, 3)
        let output: UnsafeMutablePointer<ggml_tensor>?
        if flash {
          let v = ggml_permute(
            context,
            ggml_view_4d(
              context, session.values[layer], head, Int64(shape.kvHeads), Int64(cells), 1, row, gqaRow,
              gqaRow * session.kvSize, 0), 0, 2, 1, 3)
          let attention = ggml_flash_attn_ext(context, q, k, v, mask, scale, 0, 0)
          ggml_flash_attn_ext_set_n_kv_max(attention, 0)
          _ = ggml_prec_set_acc(attention, GGML_PREC_F32)
          output = ggml_reshape_2d(context, attention, head * Int64(shape.heads), 1)
        } else {
          // Transposed V: a row of `cells` per head dimension, `kvSize` apart.
          let v = ggml_permute(
            context,
            ggml_view_4d(
              context, session.values[layer], Int64(cells), Int64(shape.kvHeads), head, 1,
              element * session.kvSize * Int(head), element * session.kvSize, gqaRow * session.kvSize, 0),
            0, 2, 1, 3)
          let product = ggml_mul_mat(context, k, q)
          _ = ggml_prec_set_acc(product, GGML_PREC_F32)
          let weights = ggml_soft_max_ext(context, product, mask, scale, 0)
          let mixed = ggml_mul_mat(context, v, weights)
          let permuted = ggml_permute(context, mixed, 0, 2, 1, 3)
          output = ggml_cont_2d(context, permuted, head * Int64(shape.heads), 1)
        }
        guard let output else { throw AttentionCalibration.Failure(reason: "ggml could not describe layer \(layer)") }
        ggml_build_forward_expand(graph, output)
      }
      guard let allocator = ggml_gallocr_new(ggml_backend_get_default_buffer_type(session.backend)) else {
        throw AttentionCalibration.Failure(reason: "ggml could not make an allocator")
      }
      self.allocator = allocator
      guard ggml_gallocr_alloc_graph(allocator, graph) else {
        throw AttentionCalibration.Failure(reason: "the graph's tensors could not be allocated")
      }
      self.graph = graph
      // The query: small finite values (0x3C3C3C3C is 0.0115 in f32).
      ggml_backend_tensor_memset(query, 0x3C, 0, ggml_nbytes(query))
      ggml_backend_tensor_memset(newKey, 0x3C, 0, ggml_nbytes(newKey))
      ggml_backend_tensor_memset(newValue, 0x3C, 0, ggml_nbytes(newValue))
      // The new token goes to cell `valid - 1` (the depth).
      let cell = Int64(valid - 1)
      let indices = flash ? [cell] : (0..<width).map { $0 * Int64(session.kvSize) + cell }
      indices.withUnsafeBytes { ggml_backend_tensor_set(keyIndex, $0.baseAddress, 0, 8) }
      indices.withUnsafeBytes { ggml_backend_tensor_set(valueIndices, $0.baseAddress, 0, $0.count) }
      fill(mask: mask, cells: cells, valid: valid, half: flash)
    }

    /// Zero for the cells the step attends to, minus infinity for the padding.
    private func fill(mask: UnsafeMutablePointer<ggml_tensor>, cells: Int, valid: Int, half: Bool) {
      if half {
        let values = (0..<cells).map { ggml_fp32_to_fp16($0 < valid ? 0 : -Float.infinity) }
        values.withUnsafeBytes { ggml_backend_tensor_set(mask, $0.baseAddress, 0, $0.count) }
      } else {
        let values = (0..<cells).map { $0 < valid ? Float(0) : -Float.infinity }
        values.withUnsafeBytes { ggml_backend_tensor_set(mask, $0.baseAddress, 0, $0.count) }
      }
    }

    /// Seconds one computation of the graph takes.
    func compute(on backend: ggml_backend_t) throws(AttentionCalibration.Failure) -> Double {
      guard let graph else { throw AttentionCalibration.Failure(reason: "the graph was not built") }
      let start = DispatchTime.now().uptimeNanoseconds
      let status = ggml_backend_graph_compute(backend, graph)
      let end = DispatchTime.now().uptimeNanoseconds
      guard status == GGML_STATUS_SUCCESS else {
        throw AttentionCalibration.Failure(reason: "ggml could not compute the graph")
      }
      return Double(end &- start) / 1e9
    }

    func free() {
      if let allocator { ggml_gallocr_free(allocator) }
      if let inputBuffer { ggml_backend_buffer_free(inputBuffer) }
      ggml_free(context)
      ggml_free(inputs)
    }
  }
}
