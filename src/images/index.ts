// The lazy chunk 'images' (scripts/build.mjs): ffmpeg and the image helpers, loaded by the first
// turn with a picture or the first camera snapshot; an idle gateway never holds them.
export { attachedImages } from './attached.js';
export { modelImage, MAX_EDGE, MAX_BYTES, type ModelImage } from './model-image.js';
export { runImageCommand, FfmpegError, FFMPEG_MISSING, causeLine } from './ffmpeg.js';
export { jpegSize } from './jpeg.js';
export { ffmpegCheck, type FfmpegCheck } from './ffmpeg-check.js';
