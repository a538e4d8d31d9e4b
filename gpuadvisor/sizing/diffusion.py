"""The activations of a latent-diffusion pipeline generating images: the larger of the
UNet's working set while it denoises the batch and the VAE's while it decodes latents
into pixels, each proportional to the pixels of an image and the images at once.

Arithmetic on the constants of ``data/constants.toml`` (``[diffusion]``, calibrated on
Hugging Face's SDXL measurements, every step shown there); no text is written here.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuadvisor.inputs.workload_model import Model
from gpuadvisor.sizing.tables import constants

#: Number formats whose images are computed in 32 bits (the others in 16).
_WIDE = frozenset({"fp32"})
#: Weight formats whose VAE decodes in 32 bits: diffusers upcasts an fp16 VAE
#: (force_upcast), and an fp32 pipeline is 32 bits throughout.
_VAE_WIDE = frozenset({"fp16", "fp32"})


@dataclass(frozen=True)
class DiffusionActivations:
    """The two working sets, in bytes, and which is the peak."""

    pixels: int
    images: int
    unet_bytes: float
    vae_bytes: float
    vae_images: int
    """Images the VAE decodes at once: all of them, or one with VAE slicing."""

    @property
    def peak_bytes(self) -> float:
        return max(self.unet_bytes, self.vae_bytes)

    @property
    def peak(self) -> str:
        return "unet" if self.unet_bytes >= self.vae_bytes else "vae"


def pixels_of(model: Model) -> int | None:
    """Pixels of one image (width x height), or None when the profile gives no size."""
    size = model.resolution
    if size is None:
        return None
    if isinstance(size, int):
        return size * size
    return size[0] * size[1]


def diffusion_activations(model: Model, precision: str) -> DiffusionActivations | None:
    """The activations of generating ``model.batch`` images, or None without a size."""
    pixels = pixels_of(model)
    if pixels is None:
        return None
    table = constants().diffusion
    images = model.batch
    vae_images = 1 if model.vae_slicing else images
    unet_width = (32.0 if precision in _WIDE else 16.0) / table.reference_bits
    vae_width = (32.0 if precision in _VAE_WIDE else 16.0) / table.reference_bits
    return DiffusionActivations(
        pixels=pixels,
        images=images,
        unet_bytes=table.unet_bytes_per_pixel * pixels * images * unet_width,
        vae_bytes=table.vae_decode_bytes_per_pixel * pixels * vae_images * vae_width,
        vae_images=vae_images,
    )
