/// The median of a few runs: robust to the one run a busy machine slows down.
func median(_ values: [Double]) -> Double {
  let sorted = values.sorted()
  guard !sorted.isEmpty else { return .nan }
  let middle = sorted.count / 2
  return sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
}

extension Duration {
  var seconds: Double {
    let (seconds, attoseconds) = components
    return Double(seconds) + Double(attoseconds) / 1e18
  }
}

func format(_ value: Double, _ digits: Int = 1) -> String {
  let scale = (0..<digits).reduce(1.0) { value, _ in value * 10 }
  return String(Double((value * scale).rounded()) / scale)
}
