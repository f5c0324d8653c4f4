"""`tf.image` on torch tensors (NHWC batches or single HWC images), one module per concern: core, color,
quality, boxes, geometry, distort, random_ops, jpeg and codecs; this package re-exports their TF names."""
from __future__ import annotations

from torchstrategy.image.boxes import (combined_non_max_suppression, crop_and_resize, draw_bounding_boxes,
                                       non_max_suppression, non_max_suppression_overlaps,
                                       non_max_suppression_padded, non_max_suppression_with_scores)
from torchstrategy.image.codecs import (decode_and_crop_jpeg, decode_bmp, decode_gif, decode_webp,
                                        extract_jpeg_shape, is_jpeg)
from torchstrategy.image.color import (adjust_gamma, adjust_hue, adjust_saturation, grayscale_to_rgb, hsv_to_rgb,
                                       rgb_to_hsv, rgb_to_yiq, rgb_to_yuv, yiq_to_rgb, yuv_to_rgb)
from torchstrategy.image.core import (ResizeMethod, adjust_brightness, adjust_contrast, central_crop,
                                      convert_image_dtype, crop_to_bounding_box, decode_image, decode_png,
                                      encode_png, flip_left_right, flip_up_down,
                                      pad_to_bounding_box, per_image_standardization, random_brightness,
                                      random_contrast, random_flip_left_right, random_flip_up_down, resize,
                                      resize_with_crop_or_pad, rgb_to_grayscale)
from torchstrategy.image.distort import (extract_glimpse, sample_distorted_bounding_box,
                                         stateless_sample_distorted_bounding_box)
from torchstrategy.image.geometry import extract_patches, resize_with_pad, rot90, transpose
from torchstrategy.image.jpeg import decode_jpeg, encode_jpeg
from torchstrategy.image.quality import (image_gradients, psnr, sobel_edges, ssim, ssim_multiscale,
                                         total_variation)
from torchstrategy.image.random_ops import (adjust_jpeg_quality, random_crop, random_hue, random_jpeg_quality,
                                            random_saturation, stateless_random_brightness,
                                            stateless_random_contrast, stateless_random_crop,
                                            stateless_random_flip_left_right, stateless_random_flip_up_down,
                                            stateless_random_hue, stateless_random_jpeg_quality,
                                            stateless_random_saturation)

__all__ = [name for name in dir() if not name.startswith("_") and name != "annotations"]
