// The relay's container image: a URI the user publishes, or a DockerImageAsset built by CDK from
// image/Dockerfile of this package (needs Docker where `cdk deploy` runs; `npm run image` is the
// Docker-free alternative whose result you push and pass as a URI).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Platform, DockerImageAsset } from 'aws-cdk-lib/aws-ecr-assets';
import type { Construct } from 'constructs';
import { PACKAGE_ROOT } from './function-code.ts';

export class RelayImageError extends Error {
  override name = 'RelayImageError';
}

export interface RelayImageFromDockerfileOptions {
  /** The package root holding image/Dockerfile and dist/; default this package. */
  readonly directory?: string;
}

export abstract class RelayImage {
  /** An image you build (`npm run image`, or `docker build -f image/Dockerfile .`) and push yourself. */
  static fromUri(uri: string): RelayImage {
    if (uri.trim() === '') throw new RelayImageError('RelayImage.fromUri: the image URI is empty');
    return new (class extends RelayImage {
      bind(): string {
        return uri;
      }
    })();
  }

  /** A DockerImageAsset from image/Dockerfile: CDK builds it and pushes it to the bootstrap ECR repository. */
  static fromDockerfile(options: RelayImageFromDockerfileOptions = {}): RelayImage {
    const directory = options.directory ?? PACKAGE_ROOT;
    return new (class extends RelayImage {
      bind(scope: Construct): string {
        for (const needed of [join('image', 'Dockerfile'), join('dist', 'relay', 'main.js')]) {
          if (!existsSync(join(directory, needed))) {
            throw new RelayImageError(
              `RelayImage.fromDockerfile: ${join(directory, needed)} does not exist; build the package first (npm run build)`,
            );
          }
        }
        return new DockerImageAsset(scope, 'RelayImage', {
          directory,
          file: join('image', 'Dockerfile'),
          platform: Platform.LINUX_AMD64,
          exclude: ['node_modules', '.tools', '.git', '.convoy', 'cdk.out', 'test', 'coverage'],
        }).imageUri;
      }
    })();
  }

  /** The image URI for the relay Deployment (may be a token). */
  abstract bind(scope: Construct): string;
}
