// transformers' Qwen-VL smart_resize, shared by the image (image_processing_qwen2_vl.py) and the
// Qwen3-VL video processor (video_processing_qwen3_vl.py): each side rounded to a multiple of
// `factor` (Python's round, ties to even), then, when frames × height × width falls outside
// [min_pixels, max_pixels], both sides scaled by the same factor and floored (too large) or ceiled
// (too small) to multiples of `factor`. An image passes one frame.
#pragma once

#include <algorithm>
#include <cmath>

namespace headroom::engine {

struct ResizedSides {
  double height = 0;
  double width = 0;
};

// `frames` is the frame count as given, `frames_rounded` the count rounded to the temporal patch
// (the video processor compares the rounded volume but scales by the given one).
inline ResizedSides qwen_smart_resize(double height, double width, double factor, double min_pixels, double max_pixels,
                                      double frames = 1, double frames_rounded = 1) {
  ResizedSides r{std::nearbyint(height / factor) * factor, std::nearbyint(width / factor) * factor};
  const double volume = frames_rounded * r.height * r.width;
  if (volume > max_pixels) {
    const double beta = std::sqrt(frames * height * width / max_pixels);
    r.height = std::max(factor, std::floor(height / beta / factor) * factor);
    r.width = std::max(factor, std::floor(width / beta / factor) * factor);
  } else if (volume < min_pixels) {
    const double beta = std::sqrt(min_pixels / (frames * height * width));
    r.height = std::ceil(height * beta / factor) * factor;
    r.width = std::ceil(width * beta / factor) * factor;
  }
  return r;
}

}  // namespace headroom::engine
